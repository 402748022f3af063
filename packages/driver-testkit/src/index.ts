export { type StateStoreFactory, stateStoreSuite } from './state-store.js';
