// The third-party sink (./map-sink.ts) and its test shown in the README, kept here so they stay true.
import { siteSinkSuite } from '../src/index.js';
import { mapSink } from './map-sink.js';

// --- README test starts ---
let sink = mapSink();
siteSinkSuite('mapSink', {
  open: async () => {
    sink = mapSink();
    return sink;
  },
  read: async () => {
    const all = [...sink.sites.values()];
    return {
      pages: all.flatMap((s) => s.pages),
      sitemaps: all.flatMap((s) => s.sitemaps),
      sites: all.map((s) => s.result),
    };
  },
});
// --- README test ends ---
