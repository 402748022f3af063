import { defineConfig } from 'vitest/config';

// CLI tests start the built bin as a child process: allow for process start-up on a busy machine.
// biome-ignore lint/style/noDefaultExport: vitest reads the config from the default export
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
