// luxon, loaded on first use through CommonJS `require`: only dates in the loose forms need it
// (the W3C forms of nearly every sitemap are parsed by hand), and a static import would load
// it in every thread that imports core, the parse workers included (~7 ms of CPU and ~1 MiB
// each). An ES module cannot load a module synchronously; this CommonJS file can. Plain
// JavaScript, copied to dist as it is, as sax-module.cjs.
let luxon = null;

exports.luxonDateTime = () => {
  luxon ??= require('luxon');
  return luxon.DateTime;
};
