export { type SqliteStateStoreOptions, sqliteStateStore } from './sqlite-state-store.js';
