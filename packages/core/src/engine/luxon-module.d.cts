import type { DateTime } from 'luxon';

export declare function luxonDateTime(): typeof DateTime;
