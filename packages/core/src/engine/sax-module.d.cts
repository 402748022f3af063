import sax = require('sax');

export declare function saxModule(): typeof sax;
export type SAXOptions = sax.SAXOptions;
