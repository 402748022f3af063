// sax, loaded on first use through CommonJS `require`, for the engine's `import`. An ES module
// importing a CommonJS package makes Node scan the package's whole source for its export names
// (cjs-module-lexer), and again in every worker thread: for sax's 60 KB that is ~20 ms of CPU a
// thread at start-up, where `require` costs 5 ms. And not at load: a batch run where every
// answer is a 304 parses no document. Plain JavaScript, copied to dist as it is, as
// luxon-module.cjs: bundlers and other runtimes read it as the CommonJS module it is.
let sax = null;

exports.saxModule = () => {
  sax ??= require('sax');
  return sax;
};
