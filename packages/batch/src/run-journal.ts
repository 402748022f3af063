import { closeSync, existsSync, ftruncateSync, openSync, readFileSync, rmSync } from 'node:fs';
import { writeAll } from './output-files.js';

/** The first line of a journal: which run the directory holds. */
export interface JournalHeader {
  readonly type: 'run';
  readonly runId: string;
  readonly startedAt: string;
  readonly gzip: boolean;
}

/** A site committed: its result and where the output files ended after its lines. */
export interface JournalEntry {
  readonly type: 'site';
  readonly site: string;
  readonly status: string;
  readonly offsets: Readonly<Record<string, number>>;
  /**
   * The copy's name when the site was walked as a queue job (an id of that try): a site walked
   * again after a kill has two copies, and the later one lists the earlier one's token in `voids`.
   */
  readonly token?: string;
  /** Tokens of earlier copies of this site (in any worker's output) that this one replaces. */
  readonly voids?: readonly string[];
}

export interface JournalContents {
  readonly header: JournalHeader;
  readonly entries: JournalEntry[];
  /** Bytes of the journal up to its last complete line (a torn last line is dropped). */
  readonly goodBytes: number;
  /** Bytes of the header line: where the first entry starts. */
  readonly headerBytes: number;
  /** For each entry, the journal's bytes up to the end of its line. */
  readonly entryEnds: number[];
}

/**
 * Reads a journal: the header and every complete site line. A last line cut by a kill has no
 * newline (or does not parse) and is ignored; `null` when the file has no header.
 */
export function readJournal(path: string): JournalContents | null {
  if (!existsSync(path)) return null;
  // Bytes, not a string: line ends are byte offsets, found in one pass however long the journal.
  const bytes = readFileSync(path);
  let header: JournalHeader | null = null;
  const entries: JournalEntry[] = [];
  const entryEnds: number[] = [];
  let pos = 0;
  let goodBytes = 0;
  let headerBytes = 0;
  for (;;) {
    const nl = bytes.indexOf(10, pos);
    if (nl < 0) break;
    const line = bytes.toString('utf8', pos, nl);
    pos = nl + 1;
    let value: { type?: unknown };
    try {
      value = JSON.parse(line);
    } catch {
      break;
    }
    if (header === null) {
      if (value.type !== 'run') return null;
      header = value as JournalHeader;
      headerBytes = pos;
    } else if (value.type === 'site') {
      entries.push(value as JournalEntry);
      entryEnds.push(pos);
    }
    goodBytes = pos;
  }
  return header === null ? null : { header, entries, goodBytes, headerBytes, entryEnds };
}

/**
 * The run journal (`journal.ndjson` in the output directory): a header, then one line per
 * committed site, appended after that site's output lines. It is what a resumed run trusts: output
 * past the last entry's offsets belongs to a site that was not committed and is cut off.
 */
export class RunJournal {
  readonly #fd: number;

  private constructor(fd: number) {
    this.#fd = fd;
  }

  get fd(): number {
    return this.#fd;
  }

  static create(path: string, header: JournalHeader): RunJournal {
    const fd = openSync(path, 'wx');
    try {
      writeAll(fd, `${JSON.stringify(header)}\n`);
    } catch (err) {
      // A journal without its header would make the directory unusable ("not a run journal").
      closeSync(fd);
      rmSync(path, { force: true });
      throw err;
    }
    return new RunJournal(fd);
  }

  /** Opens an existing journal for appending after cutting a torn last line. */
  static reopen(path: string, goodBytes: number): RunJournal {
    const fd = openSync(path, 'r+');
    ftruncateSync(fd, goodBytes);
    closeSync(fd);
    return new RunJournal(openSync(path, 'a'));
  }

  /** Appends a line. One cut short by a full disk has no newline: readers end the journal before it. */
  append(entry: JournalEntry): void {
    writeAll(this.#fd, `${JSON.stringify(entry)}\n`);
  }

  close(): void {
    closeSync(this.#fd);
  }
}
