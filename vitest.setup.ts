// Every property test in the repository runs with one fixed seed (override with USP_FUZZ_SEED) so a
// failure reproduces, and with a modest default number of runs unless a test asks for its own.
import fc from 'fast-check';

const seed = process.env.USP_FUZZ_SEED === undefined ? 20261125 : Number(process.env.USP_FUZZ_SEED);
fc.configureGlobal({ seed, numRuns: 100 });
