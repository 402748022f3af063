import { stateStoreSuite } from '@usp-ts/state-store-testkit';
import { memoryStateStore } from '../src/memory-state-store.js';

stateStoreSuite('memoryStateStore', { open: async () => memoryStateStore() });
