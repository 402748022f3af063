// A site's job id is its normalised homepage, so enqueueing a site that is already waiting or
// running adds nothing. BullMQ refuses custom ids with a `:` (they clash with its key layout), so
// `%` and `:` are percent-encoded: `https://example.com/` → `https%3A//example.com/`, and
// `decodeURIComponent` gives the site back.

/** The BullMQ job id of a site (its normalised homepage URL). */
export function siteJobId(site: string): string {
  return site.replaceAll('%', '%25').replaceAll(':', '%3A');
}

/** The site of a job id made by `siteJobId`. */
export function siteOfJobId(id: string): string {
  return id.replaceAll('%3A', ':').replaceAll('%25', '%');
}
