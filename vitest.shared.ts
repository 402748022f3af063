import { fileURLToPath } from 'node:url';
import type { ViteUserConfig } from 'vitest/config';

/** Settings every package's vitest config starts from. */
export const sharedTestConfig: ViteUserConfig = {
  test: {
    setupFiles: [fileURLToPath(new URL('./vitest.setup.ts', import.meta.url))],
    // Generous limits: CI is a 2-core machine, and a test's servers and child processes share
    // it (a queue test took over 30 s at load 29); no test relies on a timeout to pass.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
};
