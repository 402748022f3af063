export * from './compare.js';
export * from './corpus.js';
export * from './corpus-form.js';
export * from './document-suite.js';
export * from './document-view.js';
export * from './site-server.js';
