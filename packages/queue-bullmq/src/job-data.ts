import { normalizeSite, type SiteJob } from '@usp-ts/batch';
import { RUN_ID } from './runs.js';

/** A job of this package: the batch's site job, with the run it belongs to (see runs.ts). */
export interface QueueJob extends SiteJob {
  readonly run?: string;
  /** How long the run stays open after its last use, when not the default. */
  readonly keepRunMs?: number;
}

/** Longest site URL taken from a job (a homepage is `scheme://host[:port]/`; hosts are at most 253 bytes). */
const MAX_SITE_CHARS = 2_048;

const JOB_FIELDS = new Set(['site', 'full', 'run', 'keepRunMs']);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') {
    return value.length > 80 ? `a string of ${value.length} characters` : JSON.stringify(value);
  }
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}

/**
 * Why `data` is not a job of ours (added to the queue by other code), or `null` when it is: an
 * object whose `site` is an http(s) URL of at most 2,048 characters (`enqueueSites` adds the
 * normalised homepage), with optional
 * `full` (boolean), `run` (an id) and `keepRunMs` (a positive integer), nothing else. Such a
 * job fails at once with this reason, never retried and never written as rows.
 */
export function invalidJobReason(data: unknown): string | null {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    return `not a usp site job: its data is ${describe(data)}, not an object with a "site"`;
  }
  const d = data as Record<string, unknown>;
  const site = d.site;
  if (typeof site !== 'string') return `not a usp site job: "site" is ${describe(site)}, not a URL`;
  if (site.length > MAX_SITE_CHARS) {
    return `not a usp site job: "site" is ${site.length} characters long (at most ${MAX_SITE_CHARS})`;
  }
  if (normalizeSite(site) === null || site.trim() !== site) {
    return `not a usp site job: "site" ${describe(site)} is not an http(s) URL such as https://example.com/`;
  }
  if (d.full !== undefined && typeof d.full !== 'boolean') {
    return `not a usp site job: "full" is ${describe(d.full)}, not a boolean`;
  }
  if (d.run !== undefined && (typeof d.run !== 'string' || !RUN_ID.test(d.run))) {
    return `not a usp site job: "run" is ${describe(d.run)}, not a run id`;
  }
  if (
    d.keepRunMs !== undefined &&
    !(typeof d.keepRunMs === 'number' && Number.isSafeInteger(d.keepRunMs) && d.keepRunMs > 0)
  ) {
    return `not a usp site job: "keepRunMs" is ${describe(d.keepRunMs)}, not a positive integer`;
  }
  for (const key of Object.keys(d)) {
    if (!JOB_FIELDS.has(key)) return `not a usp site job: unknown field ${JSON.stringify(key.slice(0, 80))}`;
  }
  return null;
}
