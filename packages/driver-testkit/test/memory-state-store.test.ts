import { memoryStateStore } from '@usp-ts/batch';
import { stateStoreSuite } from '../src/index.js';

stateStoreSuite('memoryStateStore', { open: async () => memoryStateStore() });
