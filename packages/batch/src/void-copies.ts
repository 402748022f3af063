import {
  closeSync,
  existsSync,
  fdatasyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { JournalContents } from './run-journal.js';

// A site walked as a queue job can be walked twice: its first worker was killed after writing the
// site's lines but before the queue recorded the job as done, and another worker walked it again.
// The later copy names the earlier one's token in its journal line (`voids`), and the earlier
// copy is dropped here: its lines are cut out of the three files and its journal line removed,
// the copies after it moved down. Void copies sit near the end of a worker's files (they are the
// sites in flight when it was killed), so little is moved.
//
// A kill in the middle of a drop must lose nothing: the bytes to keep are first copied aside and
// a plan written (atomically, by rename); the files are changed only then, in a way that can be
// done again from the plan (truncate, append) until the plan is removed.

/** The files of one run's output directory. */
export interface RunFiles {
  readonly dir: string;
  readonly journal: string;
  /** The output files by name (`pages`, `sitemaps`, `sites`), the names the journal's offsets use. */
  readonly outputs: Readonly<Record<string, string>>;
}

export interface DropPlan {
  /** Where each output file (and the journal) is cut before the kept bytes are appended. */
  readonly cut: Record<string, number>;
  readonly journalCut: number;
}

const ASIDE = '.dropping';
const COPY_BYTES = 1024 * 1024;

function copyRange(from: number, to: number, start: number, end: number, piece: Buffer): void {
  let at = start;
  while (at < end) {
    const n = readSync(from, piece, 0, Math.min(piece.length, end - at), at);
    if (n === 0) throw new Error(`a file ends before byte ${end} its journal names`);
    writeSync(to, piece, 0, n);
    at += n;
  }
}

function appendFile(path: string, cut: number, from: string, piece: Buffer): void {
  const fd = openSync(path, 'r+');
  try {
    ftruncateSync(fd, cut);
    const src = openSync(from, 'r');
    try {
      let at = cut;
      for (;;) {
        const n = readSync(src, piece, 0, piece.length, null);
        if (n === 0) break;
        writeSync(fd, piece, 0, n, at);
        at += n;
      }
    } finally {
      closeSync(src);
    }
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function applyPlan(files: RunFiles, plan: DropPlan): void {
  const aside = join(files.dir, ASIDE);
  const piece = Buffer.allocUnsafe(COPY_BYTES);
  for (const [name, path] of Object.entries(files.outputs)) {
    appendFile(path, plan.cut[name] ?? 0, join(aside, name), piece);
  }
  appendFile(files.journal, plan.journalCut, join(aside, 'journal'), piece);
  rmSync(aside, { recursive: true, force: true });
}

/**
 * Completes a drop a kill interrupted (or forgets one that had not changed the files yet).
 * Returns whether the files changed.
 */
export function finishDrop(files: RunFiles): boolean {
  const aside = join(files.dir, ASIDE);
  const planPath = join(aside, 'plan.json');
  if (existsSync(planPath)) {
    applyPlan(files, JSON.parse(readFileSync(planPath, 'utf8')) as DropPlan);
    return true;
  }
  rmSync(aside, { recursive: true, force: true });
  return false;
}

/** The copy tokens of a journal's entries, in order. */
export function copyTokens(journal: JournalContents): string[] {
  const tokens: string[] = [];
  for (const e of journal.entries) if (e.token !== undefined) tokens.push(e.token);
  return tokens;
}

/**
 * Removes from a run's files the copies of sites whose token is in `voided`, keeping every other
 * site's lines in their order. Returns the sites dropped.
 */
export function dropCopies(files: RunFiles, journal: JournalContents, voided: ReadonlySet<string>): string[] {
  const planned = planDrop(files, journal, voided);
  if (planned === null) return [];
  applyPlan(files, planned.plan);
  return planned.dropped;
}

/**
 * The first half of `dropCopies`: copies the bytes to keep aside and writes the plan; the files
 * are not changed yet (a kill from here on is finished by `finishDrop`). `null`: nothing to drop.
 */
export function planDrop(
  files: RunFiles,
  journal: JournalContents,
  voided: ReadonlySet<string>,
): { plan: DropPlan; dropped: string[] } | null {
  const { entries } = journal;
  const isVoid = (token: string | undefined) => token !== undefined && voided.has(token);
  const first = entries.findIndex((e) => isVoid(e.token));
  if (first < 0) return null;
  const names = Object.keys(files.outputs);
  const endOf = (i: number, name: string) => (i < 0 ? 0 : (entries[i].offsets[name] ?? 0));
  const cut = Object.fromEntries(names.map((n) => [n, endOf(first - 1, n)]));
  const plan: DropPlan = {
    cut,
    journalCut: first === 0 ? journal.headerBytes : journal.entryEnds[first - 1],
  };
  const aside = join(files.dir, ASIDE);
  rmSync(aside, { recursive: true, force: true });
  mkdirSync(aside);
  const piece = Buffer.allocUnsafe(COPY_BYTES);
  const ins = names.map((n) => openSync(files.outputs[n], 'r'));
  const outs = names.map((n) => openSync(join(aside, n), 'w'));
  const dropped: string[] = [];
  const lines: string[] = [];
  const next = { ...cut };
  try {
    for (let i = first; i < entries.length; i++) {
      const entry = entries[i];
      if (isVoid(entry.token)) {
        dropped.push(entry.site);
        continue;
      }
      names.forEach((name, k) => {
        const start = endOf(i - 1, name);
        const end = endOf(i, name);
        copyRange(ins[k], outs[k], start, end, piece);
        next[name] += end - start;
      });
      lines.push(`${JSON.stringify({ ...entry, offsets: { ...next } })}\n`);
    }
    for (const fd of outs) fdatasyncSync(fd);
  } finally {
    for (const fd of [...ins, ...outs]) closeSync(fd);
  }
  writeFileSync(join(aside, 'journal'), lines.join(''), { flush: true });
  writeFileSync(join(aside, 'plan.tmp'), JSON.stringify(plan), { flush: true });
  renameSync(join(aside, 'plan.tmp'), join(aside, 'plan.json'));
  return { plan, dropped };
}
