import { pageStoreSuite } from '@usp-ts/driver-testkit';
import { type FilePageStore, filePageStore } from '../src/pages/file-store.js';

// The temp-file page store through the suite every page store runs.
pageStoreSuite('filePageStore', {
  open: () => filePageStore(),
  close: (store) => (store as FilePageStore).dispose(),
});
