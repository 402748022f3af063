import {
  createLineSplitter,
  type DocumentInfo,
  InvalidOptionError,
  isHttpUrl,
  type ParseContext,
  type ParseOutcome,
  pythonStrip,
  type RobotsGroup,
  resolveUrl,
  type TextFormat,
  type TextParser,
} from '@usp-ts/core/parse';
import { type RobotsRule, RobotsRuleSet } from './rules.js';

export interface RobotsTxtOptions {
  /**
   * Read the rules (user-agent groups, allow/disallow, crawl-delay) as well as the Sitemap
   * lines (default `true`). `false` skips them: the outcome then carries no `robots`.
   */
  parseRules?: boolean;
  /**
   * Rules are read from the first this many characters of the file (default 512 KiB, the
   * limit Google applies); Sitemap lines are read from the whole file.
   */
  maxRulesLength?: number;
  /** Longest line read, in characters (default 64 KiB); a longer line is skipped with a warning. */
  maxLineLength?: number;
}

const DEFAULTS = {
  parseRules: true,
  maxRulesLength: 512 * 1024,
  maxLineLength: 64 * 1024,
} as const;

/** `Sitemap`/`Site-map` (Google reads both), any case. */
const SITEMAP_KEYS = new Set(['sitemap', 'site-map']);
/** `User-agent` and the spellings Google's parser also accepts. */
const USER_AGENT_KEYS = new Set(['user-agent', 'useragent', 'user agent']);
const ALLOW_KEYS = new Set(['allow']);
/** `Disallow` and the misspellings Google's parser also accepts. */
const DISALLOW_KEYS = new Set(['disallow', 'dissallow', 'dissalow', 'disalow', 'diasllow', 'disallaw']);
const CRAWL_DELAY_KEYS = new Set(['crawl-delay', 'crawldelay', 'crawl delay']);
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:/i;
/** A comment after a Sitemap value needs whitespace before `#` (a bare `#` would be a URL fragment). */
const SITEMAP_COMMENT_RE = /\s#/;

/**
 * The robots.txt format: claims a non-XML document whose URL path ends in `/robots.txt`,
 * emits every `Sitemap:` line as a child sitemap and parses the rest into RFC 9309 rules.
 */
export function robotsTxt(options: RobotsTxtOptions = {}): TextFormat {
  const opts = checkOptions(options);
  return {
    kind: 'text',
    name: 'robots',
    claims: (doc: DocumentInfo) => isRobotsTxtUrl(doc.url),
    createParser: (ctx: ParseContext) => createRobotsParser(ctx, opts),
  };
}

/** usp's test: the final URL ends in `/robots.txt` (we look at the path, so a query does not hide it). */
export function isRobotsTxtUrl(url: string): boolean {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    path = url.split(/[?#]/, 1)[0];
  }
  return path.endsWith('/robots.txt');
}

interface GroupDraft {
  userAgents: string[];
  rules: RobotsRule[];
  crawlDelay: number | null;
}

function createRobotsParser(ctx: ParseContext, opts: Required<RobotsTxtOptions>): TextParser {
  const seen = new Set<string>();
  const groups: GroupDraft[] = [];
  let group: GroupDraft | null = null;
  // A user-agent line after a rule line starts a new group (RFC 9309 2.1).
  let groupHasRules = false;
  // 'open' → 'full' when the driver says the fan-out cap is reached; one more child is then
  // offered so the driver can tell "there were more" (its `limit` warning), then 'closed'.
  let children: 'open' | 'full' | 'closed' = 'open';
  let charsRead = 0;
  let rulesOpen = opts.parseRules;

  const onSitemap = (rawValue: string, truncated: boolean): void => {
    if (children === 'closed') return;
    const comment = SITEMAP_COMMENT_RE.exec(rawValue);
    const value = pythonStrip(comment === null ? rawValue : rawValue.slice(0, comment.index));
    if (value === '') return;
    if (truncated) {
      ctx.warn('invalid-url', `Sitemap line longer than ${opts.maxLineLength} characters skipped`);
      return;
    }
    let url = value;
    if (!isHttpUrl(value)) {
      const resolved = SCHEME_RE.test(value) ? null : resolveUrl(value, ctx.url);
      if (resolved === null || !isHttpUrl(resolved)) {
        ctx.warn('invalid-url', `Sitemap URL ${quote(value)} is not an http(s) URL, skipped`);
        return;
      }
      ctx.warn('relative-url', `Relative Sitemap URL ${quote(value)} resolved to ${resolved}`);
      url = resolved;
    }
    if (seen.has(url)) return;
    seen.add(url);
    if (children === 'full') {
      ctx.child({ url, lastModified: null });
      children = 'closed';
      return;
    }
    if (!ctx.child({ url, lastModified: null })) children = 'full';
  };

  const onRuleLine = (key: string, rawValue: string, truncated: boolean): void => {
    const hash = rawValue.indexOf('#');
    const value = (hash === -1 ? rawValue : rawValue.slice(0, hash)).trim();
    if (USER_AGENT_KEYS.has(key)) {
      if (group === null || groupHasRules) {
        group = { userAgents: [], rules: [], crawlDelay: null };
        groups.push(group);
        groupHasRules = false;
      }
      if (value !== '') group.userAgents.push(value);
      return;
    }
    const allow = ALLOW_KEYS.has(key);
    if (allow || DISALLOW_KEYS.has(key)) {
      if (group === null) return; // rules before any user-agent line belong to no group
      groupHasRules = true;
      // A cut pattern would match more than the site meant; an empty one matches nothing.
      if (truncated || value === '') return;
      group.rules.push({ allow, path: value });
      return;
    }
    if (CRAWL_DELAY_KEYS.has(key)) {
      if (group === null) return;
      groupHasRules = true;
      const delay = Number(value);
      if (value !== '' && Number.isFinite(delay) && delay >= 0) {
        group.crawlDelay ??= delay;
      } else {
        ctx.warn('invalid-robots', `Crawl-delay ${quote(value)} is not a number of seconds, ignored`);
      }
    }
  };

  let lineNumber = 0;
  const splitter = createLineSplitter(
    (line, truncated) => {
      ctx.atLine(++lineNumber);
      if (rulesOpen) {
        charsRead += line.length + 1;
        if (charsRead > opts.maxRulesLength) {
          rulesOpen = false;
          ctx.warn(
            'limit',
            `Rules past the first ${opts.maxRulesLength} characters ignored (Sitemap lines still read)`,
          );
        }
      }
      const text = pythonStrip(line);
      if (text === '' || text.charCodeAt(0) === 0x23 /* # */) return;
      const colon = text.indexOf(':');
      if (colon <= 0) return;
      // `Sitemap : url` (space before the colon) is read too, as Google does; usp ignores it.
      const key = text.slice(0, colon).trim().toLowerCase();
      const rawValue = text.slice(colon + 1);
      if (SITEMAP_KEYS.has(key)) onSitemap(rawValue, truncated);
      else if (rulesOpen) onRuleLine(key, rawValue, truncated);
    },
    { maxLineLength: opts.maxLineLength },
  );

  return {
    type: 'IndexRobotsTxtSitemap',
    write(text) {
      splitter.write(text);
    },
    end(truncated = false): ParseOutcome {
      splitter.end(truncated);
      if (!opts.parseRules) return { type: 'IndexRobotsTxtSitemap' };
      const frozen: RobotsGroup[] = groups.map((g) => ({
        userAgents: g.userAgents,
        rules: g.rules,
        crawlDelay: g.crawlDelay,
      }));
      return { type: 'IndexRobotsTxtSitemap', robots: new RobotsRuleSet(frozen) };
    },
  };
}

function quote(s: string): string {
  return JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
}

function checkOptions(options: RobotsTxtOptions): Required<RobotsTxtOptions> {
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', 'must be an object');
  const opts = { ...DEFAULTS, ...stripUndefined(options) };
  if (typeof opts.parseRules !== 'boolean') throw new InvalidOptionError('parseRules', 'must be a boolean');
  for (const key of ['maxRulesLength', 'maxLineLength'] as const) {
    const v = opts[key];
    if (!Number.isInteger(v) || v < 1)
      throw new InvalidOptionError(key, `must be a positive integer, got ${String(v)}`);
  }
  return opts;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
