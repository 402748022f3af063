/**
 * Renames namespace prefixes throughout an XML document (alpha-renaming): the namespaces of
 * every element stay the same, only the prefixes that spell them change, including moving a
 * namespace between "default" and "prefixed". A parser that dispatches on namespace URIs
 * gives the same result; one that looks at prefixes does not.
 *
 * Generic but careful: returns `null` when the document cannot be renamed safely (a prefix
 * bound to two URIs, unprefixed elements outside a default namespace, no prefixes at all).
 */

interface Tag {
  start: number;
  end: number;
  /** `<name`, `</name`. */
  closing: boolean;
  name: string;
  attrs: { name: string; nameStart: number }[];
}

/** Scans the markup of `xml`: tags only; comments, CDATA, PIs and DOCTYPE are skipped whole. */
function scanTags(xml: string): Tag[] | null {
  const tags: Tag[] = [];
  let i = 0;
  while (true) {
    const lt = xml.indexOf('<', i);
    if (lt === -1) return tags;
    if (xml.startsWith('<!--', lt)) {
      const e = xml.indexOf('-->', lt + 4);
      if (e === -1) return null;
      i = e + 3;
      continue;
    }
    if (xml.startsWith('<![CDATA[', lt)) {
      const e = xml.indexOf(']]>', lt + 9);
      if (e === -1) return null;
      i = e + 3;
      continue;
    }
    if (xml.startsWith('<?', lt)) {
      const e = xml.indexOf('?>', lt + 2);
      if (e === -1) return null;
      i = e + 2;
      continue;
    }
    if (xml.startsWith('<!', lt)) return null;
    const closing = xml[lt + 1] === '/';
    let j = lt + (closing ? 2 : 1);
    const nameStart = j;
    while (j < xml.length && !/[\s/>]/.test(xml[j])) j++;
    const name = xml.slice(nameStart, j);
    if (name === '') return null;
    const attrs: Tag['attrs'] = [];
    while (j < xml.length && xml[j] !== '>') {
      const c = xml[j];
      if (c === '"' || c === "'") {
        const e = xml.indexOf(c, j + 1);
        if (e === -1) return null;
        j = e + 1;
        continue;
      }
      if (/[\s/]/.test(c)) {
        j++;
        continue;
      }
      const s = j;
      while (j < xml.length && !/[\s=/>]/.test(xml[j])) j++;
      attrs.push({ name: xml.slice(s, j), nameStart: s });
      while (j < xml.length && /\s/.test(xml[j])) j++;
      if (xml[j] === '=') j++;
    }
    if (j >= xml.length) return null;
    tags.push({ start: lt, end: j + 1, closing, name, attrs });
    i = j + 1;
  }
}

function prefixOf(name: string): string {
  const c = name.indexOf(':');
  return c === -1 ? '' : name.slice(0, c);
}

/**
 * A copy of `xml` with its prefixes permuted by `pick` (called with the list of candidate
 * names; returns a permutation of it). `null` when the document is not safe to rewrite.
 */
export function shufflePrefixes(xml: string, permute: <T>(items: T[]) => T[]): string | null {
  const tags = scanTags(xml);
  if (tags === null || tags.length === 0) return null;
  // Which URI each prefix is bound to (one per prefix, or we give up).
  const bound = new Map<string, string>();
  const fixed = new Set<string>(['xml', 'xmlns']);
  let defaultDeclaredOnRootOnly = true;
  for (const [index, tag] of tags.entries()) {
    if (tag.closing) continue;
    for (const attr of tag.attrs) {
      if (attr.name === 'xmlns' || attr.name.startsWith('xmlns:')) {
        const prefix = attr.name === 'xmlns' ? '' : attr.name.slice(6);
        const value = attrValue(xml, tag, attr.nameStart);
        if (value === null) return null;
        if (prefix === '' && index !== 0) defaultDeclaredOnRootOnly = false;
        const had = bound.get(prefix);
        if (had !== undefined && had !== value) return null;
        if (value === '') return null;
        bound.set(prefix, value);
      } else if (attr.name.includes(':')) {
        // Formats read attributes by their written name: leave attribute prefixes alone.
        fixed.add(prefixOf(attr.name));
      }
    }
  }
  const usedElementPrefixes = new Set(tags.map((t) => prefixOf(t.name)));
  for (const p of usedElementPrefixes) if (p !== '' && !bound.has(p)) return null;
  const movable = [...bound.keys()].filter((p) => !fixed.has(p));
  // The default namespace can trade places with a prefix only if it covers every unprefixed
  // element: declared on the root, never undeclared.
  const includeDefault = bound.has('') && defaultDeclaredOnRootOnly;
  const candidates = movable.filter((p) => p !== '' || includeDefault);
  if (!usedElementPrefixes.has('') || !includeDefault) {
    // Unprefixed elements in no namespace must stay unprefixed.
    const i = candidates.indexOf('');
    if (i !== -1) candidates.splice(i, 1);
  }
  if (candidates.length === 0) return null;
  // Extra fresh names widen the permutation beyond swapping existing prefixes.
  const pool = [...candidates, 'ns0', 'zz'].filter((p) => !bound.has(p) || candidates.includes(p));
  const image = permute(pool).slice(0, candidates.length);
  const rename = new Map<string, string>();
  candidates.forEach((p, i) => {
    rename.set(p, image[i]);
  });
  // A prefix that becomes '' (default) must not collide with unprefixed no-namespace elements.
  if (
    [...rename.values()].includes('') &&
    (!bound.has('') || !includeDefault) &&
    usedElementPrefixes.has('')
  ) {
    return null;
  }

  let out = '';
  let at = 0;
  for (const tag of tags) {
    out += xml.slice(at, tag.start);
    out += rewriteTag(xml, tag, rename);
    at = tag.end;
  }
  return out + xml.slice(at);
}

function attrValue(xml: string, tag: Tag, nameStart: number): string | null {
  let j = xml.indexOf('=', nameStart);
  if (j === -1 || j > tag.end) return null;
  j++;
  while (/\s/.test(xml[j])) j++;
  const q = xml[j];
  if (q !== '"' && q !== "'") return null;
  const e = xml.indexOf(q, j + 1);
  return e === -1 ? null : xml.slice(j + 1, e);
}

function renamed(name: string, rename: Map<string, string>): string {
  const prefix = prefixOf(name);
  const to = rename.get(prefix);
  if (to === undefined) return name;
  const local = prefix === '' ? name : name.slice(prefix.length + 1);
  return to === '' ? local : `${to}:${local}`;
}

function rewriteTag(xml: string, tag: Tag, rename: Map<string, string>): string {
  const src = xml.slice(tag.start, tag.end);
  const nameAt = tag.closing ? 2 : 1;
  let out = src.slice(0, nameAt) + renamed(tag.name, rename);
  let at = nameAt + tag.name.length;
  for (const attr of tag.attrs) {
    const rel = attr.nameStart - tag.start;
    out += src.slice(at, rel);
    let name = attr.name;
    if (name === 'xmlns' || name.startsWith('xmlns:')) {
      const prefix = name === 'xmlns' ? '' : name.slice(6);
      const to = rename.get(prefix);
      if (to !== undefined) name = to === '' ? 'xmlns' : `xmlns:${to}`;
    }
    out += name;
    at = rel + attr.name.length;
  }
  return out + src.slice(at);
}
