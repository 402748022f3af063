import { fileURLToPath } from 'node:url';
import type { ViteUserConfig } from 'vitest/config';

/** Settings every package's vitest config starts from. */
export const sharedTestConfig: ViteUserConfig = {
  test: {
    setupFiles: [fileURLToPath(new URL('./vitest.setup.ts', import.meta.url))],
    // Generous limits: CI is a 2-core machine; no test relies on a timeout to pass.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
};
