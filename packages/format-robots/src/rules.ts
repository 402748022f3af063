import type { RobotsGroup, RobotsRules } from '@usp-ts/core/parse';

/** One `Allow`/`Disallow` line as written (comment and surrounding whitespace removed). */
export interface RobotsRule {
  readonly allow: boolean;
  readonly path: string;
}

interface CompiledRule {
  readonly allow: boolean;
  /** Specificity: octets of the normalised pattern (RFC 9309 2.2.2, "most octets"). */
  readonly length: number;
  readonly matches: (path: string) => boolean;
}

interface CompiledGroup {
  readonly tokens: readonly string[];
  readonly rules: readonly CompiledRule[];
  readonly crawlDelay: number | null;
}

const ROBOTS_TXT_PATH = '/robots.txt';

/**
 * robots.txt rules with RFC 9309 matching: the group whose product token matches the crawler
 * most specifically (case-insensitive; `googlebot` serves `Googlebot-Image` when no
 * `googlebot-image` group exists; `*` otherwise), all groups naming that token merged; then the
 * longest matching pattern wins, `Allow` on a tie; `*` matches any run, a final `$` anchors;
 * percent-encoding is normalised on both sides; `/robots.txt` is always allowed.
 */
export class RobotsRuleSet implements RobotsRules {
  readonly groups: readonly RobotsGroup[];
  readonly #compiled: readonly CompiledGroup[];
  // Callers ask for one or two user agents, many times: the group choice is remembered.
  readonly #selection = new Map<string, readonly CompiledGroup[]>();

  constructor(groups: readonly RobotsGroup[]) {
    this.groups = groups;
    this.#compiled = groups.map((g) => ({
      tokens: g.userAgents.map(groupToken).filter((t) => t !== ''),
      rules: g.rules.filter((r) => r.path !== '').map(compileRule),
      crawlDelay: g.crawlDelay,
    }));
  }

  isAllowed(url: string, userAgent: string): boolean {
    const path = pathOf(url);
    if (path === ROBOTS_TXT_PATH) return true;
    const target = normaliseRobotsPath(path);
    let best: CompiledRule | null = null;
    for (const group of this.#select(userAgent)) {
      for (const rule of group.rules) {
        if (best !== null && (rule.length < best.length || (rule.length === best.length && !rule.allow)))
          continue;
        if (rule.matches(target)) best = rule;
      }
    }
    return best === null ? true : best.allow;
  }

  crawlDelay(userAgent: string): number | null {
    for (const group of this.#select(userAgent)) if (group.crawlDelay !== null) return group.crawlDelay;
    return null;
  }

  #select(userAgent: string): readonly CompiledGroup[] {
    const token = productToken(userAgent);
    const cached = this.#selection.get(token);
    if (cached !== undefined) return cached;
    let bestToken = '';
    if (token !== '') {
      for (const g of this.#compiled) {
        for (const t of g.tokens) {
          if (t === '*' || t.length <= bestToken.length) continue;
          if (token === t || token.startsWith(`${t}-`)) bestToken = t;
        }
      }
    }
    const want = bestToken === '' ? '*' : bestToken;
    const chosen = this.#compiled.filter((g) => g.tokens.includes(want));
    if (this.#selection.size < 64) this.#selection.set(token, chosen);
    return chosen;
  }
}

/**
 * The product token of a crawler's user agent, lower-cased: the leading run of letters, `_`
 * and `-` (RFC 9309 2.2.1), so `MyBot/1.0 (+https://...)` is `mybot`.
 */
export function productToken(userAgent: string): string {
  const s = userAgent.trim();
  let end = 0;
  while (end < s.length && isTokenChar(s.charCodeAt(end))) end++;
  return s.slice(0, end).toLowerCase();
}

/** A `User-agent:` value as a group token: `*`, or its product token (`Googlebot/2.1` → `googlebot`). */
function groupToken(value: string): string {
  const s = value.trim();
  if (s.startsWith('*')) return '*';
  return productToken(s);
}

function isTokenChar(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2d;
}

/** Path and query of a URL (what rules match against); a bare `/path` is taken as is. */
function pathOf(url: string): string {
  if (url.startsWith('/') && !url.startsWith('//')) {
    const hash = url.indexOf('#');
    return hash === -1 ? url : url.slice(0, hash);
  }
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return '/';
  }
}

function compileRule(rule: RobotsRule): CompiledRule {
  let pattern = normaliseRobotsPath(rule.path);
  // RFC 9309 patterns start with `/`; `Disallow: private` is read as `/private` (stricter, never looser).
  if (!pattern.startsWith('/') && !pattern.startsWith('*')) pattern = `/${pattern}`;
  return { allow: rule.allow, length: pattern.length, matches: compilePattern(pattern) };
}

/** `*` matches any run of characters, a final `$` anchors the end; everything else is literal. */
export function compilePattern(pattern: string): (path: string) => boolean {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  const parts = body.split('*');
  if (parts.length === 1) return anchored ? (p) => p === body : (p) => p.startsWith(body);
  const head = parts[0];
  const last = parts.length - 1;
  const tail = parts[last];
  return (p) => {
    if (!p.startsWith(head)) return false;
    // Leftmost placement of each middle piece leaves the most room for the rest: greedy is exact.
    let pos = head.length;
    for (let k = 1; k < last; k++) {
      const piece = parts[k];
      if (piece === '') continue;
      const at = p.indexOf(piece, pos);
      if (at === -1) return false;
      pos = at + piece.length;
    }
    if (!anchored) return tail === '' || p.indexOf(tail, pos) !== -1;
    return p.length - tail.length >= pos && p.endsWith(tail);
  };
}

/**
 * RFC 9309 2.2.2: non-ASCII characters are percent-encoded as UTF-8, escapes of unreserved
 * characters are decoded (`%7E` is `~`), other escapes get upper-case hex (`%2f` is `%2F`).
 */
export function normaliseRobotsPath(path: string): string {
  let out = '';
  let plainFrom = 0;
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === 0x25 /* % */ && isHex(path.charCodeAt(i + 1)) && isHex(path.charCodeAt(i + 2))) {
      out += path.slice(plainFrom, i);
      const code = Number.parseInt(path.slice(i + 1, i + 3), 16);
      out += isUnreserved(code) ? String.fromCharCode(code) : `%${path.slice(i + 1, i + 3).toUpperCase()}`;
      i += 2;
      plainFrom = i + 1;
    } else if (c > 0x7e || c < 0x21) {
      out += path.slice(plainFrom, i);
      let ch = path[i];
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < path.length) {
        const next = path.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) {
          ch += path[i + 1];
          i++;
        }
      }
      out += encodeChar(ch);
      plainFrom = i + 1;
    }
  }
  return plainFrom === 0 ? path : out + path.slice(plainFrom);
}

function encodeChar(ch: string): string {
  try {
    return encodeURIComponent(ch);
  } catch {
    return '%EF%BF%BD'; // a lone surrogate: what a UTF-8 encoder writes for it
  }
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function isUnreserved(c: number): boolean {
  return (
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e
  );
}
