import { readFileSync } from 'node:fs';
import { DEFAULT_CONCURRENCY, DEFAULT_MAX_DEPTH, DEFAULT_MAX_SITEMAPS } from '@usp-ts/core';
import { DEFAULT_USER_AGENT, DEFAULTS, VERSION } from '@usp-ts/fetcher';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli-helpers.js';

const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

describe('usp: help, version, usage errors', () => {
  it('prints usp v<version> for -v and --version', async () => {
    for (const flag of ['-v', '--version']) {
      const r = await runCli([flag]);
      expect(r).toEqual({ code: 0, stdout: `usp v${version}\n`, stderr: '' });
    }
  });

  it('prints the help and exits 0 without a command, for -h, --help and help', async () => {
    for (const args of [[], ['-h'], ['--help'], ['help']]) {
      const r = await runCli(args);
      expect(r.code).toBe(0);
      expect(r.stdout.startsWith('usage: usp [-h] [-v]')).toBe(true);
      for (const command of ['ls', 'parse', 'validate', 'demo']) expect(r.stdout).toContain(`  ${command} `);
      expect(r.stderr).toBe('');
    }
  });

  it('has --help on every command', async () => {
    for (const command of ['ls', 'parse', 'validate', 'demo']) {
      const r = await runCli([command, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout.startsWith(`usage: usp ${command} `)).toBe(true);
      expect(r.stderr).toBe('');
      const short = await runCli([command, '-h']);
      expect(short.stdout).toBe(r.stdout);
      const viaHelp = await runCli(['help', command]);
      expect(viaHelp.stdout).toBe(r.stdout);
    }
  });

  it('documents usp ls flags with usp descriptions', async () => {
    const r = await runCli(['ls', '--help']);
    expect(r.stdout).toContain('download, parse and list the sitemap structure');
    for (const f of [
      '-f, --format',
      '-r, --no-robots',
      '-k, --no-known',
      '-u, --strip-url',
      '-l, --log-file',
    ]) {
      expect(r.stdout).toContain(f);
    }
  });

  it('gives the default of every ls option that takes a value, as the code has it', async () => {
    const r = await runCli(['ls', '--help']);
    const option = (name: string): string => {
      // An option's text runs until the next line that starts another option or section.
      const m = new RegExp(`^ {2}${name}[^\\n]*(?:\\n {20,}[^\\n]*)*`, 'm').exec(r.stdout);
      expect(m, name).not.toBeNull();
      return (m as RegExpExecArray)[0].replace(/\s+/g, ' ');
    };
    expect(option('--max-sitemaps')).toContain(`(default ${DEFAULT_MAX_SITEMAPS.toLocaleString('en-US')})`);
    expect(option('--max-sitemaps')).toContain('(default 10,000)');
    expect(option('--max-pages')).toContain('(default: none)');
    expect(option('--deadline')).toContain('(default: none)');
    expect(option('--max-depth')).toContain(`(default ${DEFAULT_MAX_DEPTH},`);
    expect(option('--concurrency')).toContain(`(default ${DEFAULT_CONCURRENCY})`);
    expect(option('--retries')).toContain(`(default ${DEFAULTS.retries},`);
    expect(DEFAULTS.requestTimeoutMs).toBe(120_000);
    expect(option('--timeout')).toContain('(default 2m)');
    expect(option('--user-agent')).toContain(DEFAULT_USER_AGENT.replace(VERSION, '<version>'));
    expect(option('-f, --format')).toContain('(default: tabtree)');
  });

  it('documents the exit status of ls and parse in --help', async () => {
    for (const command of ['ls', 'parse']) {
      const r = await runCli([command, '--help']);
      expect(r.stdout, command).toMatch(
        /\nexit status:\n {2}0 .*\n(?:.*\n)*? {2}1 .*\n(?:.*\n)*? {2}2 {2}usage error/,
      );
    }
  });

  it('exits 2 with the usage line and one error line when ls misses its url', async () => {
    const r = await runCli(['ls']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0].startsWith('usage: usp ls')).toBe(true);
    expect(lines[1]).toBe('usp: error: the following arguments are required: url');
  });

  it('exits 2 on an unknown command, an unknown option and a bad option value', async () => {
    const unknownCommand = await runCli(['lls', 'http://example.com/']);
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain('usp: error: invalid choice "lls"');

    const unknownOption = await runCli(['ls', '--frobnicate', 'http://example.com/']);
    expect(unknownOption.code).toBe(2);
    expect(unknownOption.stderr).toMatch(/^usage: usp ls .*\nusp: error: .*frobnicate/);

    const badFormat = await runCli(['ls', '-f', 'xml', 'http://example.com/']);
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain(
      'invalid choice "xml" (choose from tabtree, pages, json, ndjson, csv)',
    );

    const badNumber = await runCli(['ls', '--max-pages', 'lots', 'http://example.com/']);
    expect(badNumber.code).toBe(2);
    expect(badNumber.stderr).toContain('--max-pages expects an integer');

    const badDuration = await runCli(['ls', '--deadline', 'soon', 'http://example.com/']);
    expect(badDuration.code).toBe(2);
    expect(badDuration.stderr).toContain('--deadline expects a duration');
  });

  it('exits 2 for a URL that is not http(s), with one line and no stack trace', async () => {
    const r = await runCli(['ls', 'ftp://example.com/']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('usp: error: URL ftp://example.com/ is not a HTTP(s) URL');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('fails with one line and exit 1 when the log file cannot be opened', async () => {
    const r = await runCli(['ls', '-l', '/nonexistent-dir/usp.log', 'http://example.com/']);
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr: 'usp: error: cannot open log file /nonexistent-dir/usp.log: ENOENT\n',
    });
  });
});
