import { hostGate, memorySink } from '@usp-ts/batch';
import { countingPageStore, memoryPageStore } from '@usp-ts/core';
import { pageStoreSuite, politenessGateSuite, siteSinkSuite } from '../src/index.js';

// The first-party in-process drivers, through the suites a third-party driver runs.
let sink = memorySink();
siteSinkSuite('memorySink', {
  open: async () => {
    sink = memorySink();
    return sink;
  },
  read: async () => sink.rows,
});

politenessGateSuite('hostGate', { open: async (limits) => hostGate(limits) });

pageStoreSuite('memoryPageStore', { open: () => memoryPageStore() });
pageStoreSuite('countingPageStore', { open: () => countingPageStore(), keepsPages: false });
