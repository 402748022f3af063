export {
  extensionHost,
  KIT_NS,
  type RunExtensionOptions,
  type RunExtensionResult,
  runExtension,
  wrapEntries,
} from './extension-host.js';
export {
  cutOffsets,
  DEFAULT_FUZZ_LIMITS,
  describeFormatKit,
  expectPrefix,
  expectSane,
  type FormatKitOptions,
  fuzzRuns,
  type KitCheck,
} from './kit.js';
export { applyEdits, type Edit, editArbitrary } from './mutate.js';
export { type ParseWithOptions, parseWith, streamedBody } from './parse.js';
export { shufflePrefixes } from './prefixes.js';
export {
  chunked,
  type DocumentSnapshot,
  type KitSample,
  parseChunks,
  snapshot,
  toBytes,
} from './snapshot.js';
