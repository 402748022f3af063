// The made-up extension the README tests (`test/readme-example.test.ts` is its test).
import type { XmlExtension } from '@usp-ts/core';

declare module '@usp-ts/core' {
  interface PageExtensions {
    minutes?: number;
  }
}

export const RECIPE_NS = 'https://example.com/schemas/recipe/1.0';

/** Reads `<recipe:minutes>` into `page.extensions.minutes`. */
export const recipe = (): XmlExtension => ({
  name: 'recipe',
  namespaces: [RECIPE_NS],
  create: (ctx) => ({
    open() {},
    close(el, text, draft) {
      if (el.local !== 'minutes') return;
      const minutes = Number(text);
      if (Number.isInteger(minutes)) draft.extensions = { ...draft.extensions, minutes };
      else ctx.warn('invalid-value', `Bad <recipe:minutes>: ${text}`);
    },
  }),
});
