import sax = require('sax');
export = sax;
