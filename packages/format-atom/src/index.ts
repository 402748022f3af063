export { ATOM_03_NAMESPACE, ATOM_10_NAMESPACE, type AtomOptions, atom } from './atom.js';
