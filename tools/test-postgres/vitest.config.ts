import { defineConfig } from 'vitest/config';
import { sharedTestConfig } from '../../vitest.shared.ts';

// biome-ignore lint/style/noDefaultExport: vitest reads the config from the default export
export default defineConfig(sharedTestConfig);
