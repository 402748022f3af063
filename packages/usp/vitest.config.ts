import { defineConfig, mergeConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// CLI tests start the built bin as a child process: allow for process start-up on a busy machine.
// biome-ignore lint/style/noDefaultExport: vitest reads the config from the default export
export default defineConfig(
  mergeConfig(sharedTestConfig, {
    test: {
      testTimeout: 60_000,
      hookTimeout: 60_000,
      // The run's temp files in a directory of its own, removed at the end (test/temp-dir.global.ts).
      globalSetup: ['./test/temp-dir.global.ts'],
    },
  }),
);
