export { type PageStoreFactory, pageStoreSuite } from './page-store.js';
export { type GateLimits, type PolitenessGateFactory, politenessGateSuite } from './politeness-gate.js';
export { type SinkContents, type SiteSinkFactory, siteSinkSuite } from './site-sink.js';
export { type StateStoreFactory, stateStoreSuite } from './state-store.js';
