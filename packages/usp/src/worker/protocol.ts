// The messages between the main thread's worker pool and a parser worker.
import type { PagesSitemapType, ParseDocumentOptions, Warning } from '@usp-ts/core/parse';
import type { PageBatch } from '../pages/codec.js';

/** @internal main → worker */
export type ToWorker =
  | {
      t: 'start';
      id: number;
      url: string;
      headers: Record<string, string>;
      limits: ParseDocumentOptions['limits'];
      /** The caller stores pages as records only: a batch of ordinary pages goes as `records`. */
      recordsOnly: boolean;
    }
  | { t: 'chunk'; id: number; data: Uint8Array }
  | { t: 'end'; id: number; error?: { message: string; code?: string; name?: string } }
  | { t: 'ack'; id: number }
  | { t: 'abort'; id: number }
  | { t: 'cancel'; id: number };

/** @internal worker → main */
export type FromWorker =
  | { t: 'credit'; id: number; bytes: number }
  | { t: 'pages'; id: number; type: PagesSitemapType; batch: PageBatch; warnings: Warning[] }
  /** `n` ordinary pages as pages/records.ts's plain records, for a `recordsOnly` job. */
  | { t: 'records'; id: number; type: PagesSitemapType; n: number; records: Uint8Array; warnings: Warning[] }
  /** `result` is the ParsedDocument with its dates tagged, its warnings sent beside it. */
  | { t: 'done'; id: number; result: unknown; warnings: Warning[] }
  | { t: 'fail'; id: number; message: string };

/** Response headers a format may look at when deciding; the lookup function cannot cross threads. */
export const FORWARDED_HEADERS = [
  'content-type',
  'content-encoding',
  'content-disposition',
  'content-length',
  'x-robots-tag',
];
