// Changelog lines for `changeset version`: changesets' own line per changeset, and no "Updated
// dependencies" lines. Every published package is released together at one version (the fixed
// group in config.json), so those lines would only repeat, for every changeset of every other
// package, what the version number already says.
const { default: git } = require('@changesets/cli/changelog');

module.exports = {
  getReleaseLine: git.getReleaseLine,
  getDependencyReleaseLine: async () => '',
};
