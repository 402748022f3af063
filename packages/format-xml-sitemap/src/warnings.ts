import type { ParseContext, WarningCode } from '@usp-ts/core';

/** Warnings of one code reported individually per document; the rest are counted. */
export const WARNINGS_PER_CODE = 20;

/**
 * A context whose warnings are capped per code: a 50,000-URL sitemap with one systematic fault
 * would otherwise carry 50,000 warnings on its node. `flush` reports what was held back.
 */
export interface CappedContext extends ParseContext {
  flush(): void;
}

export function capWarnings(ctx: ParseContext, perCode = WARNINGS_PER_CODE): CappedContext {
  const counts = new Map<WarningCode, number>();
  return {
    url: ctx.url,
    limits: ctx.limits,
    page: (page) => ctx.page(page),
    child: (ref) => ctx.child(ref),
    warn(code, message) {
      const n = (counts.get(code) ?? 0) + 1;
      counts.set(code, n);
      if (n <= perCode) ctx.warn(code, message);
    },
    flush() {
      for (const [code, n] of counts) {
        if (n > perCode)
          ctx.warn(code, `${n - perCode} more '${code}' warnings in this document not reported`);
      }
      counts.clear();
    },
  };
}
