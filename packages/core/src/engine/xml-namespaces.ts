/**
 * Namespace scopes for the XML engine: the default namespace and prefix bindings in force, and
 * an undo log written only by elements that declare namespaces, so an element that declares
 * none costs nothing here.
 */
import type { WarningCode } from '../contract/warning.js';

const XML_NS = 'http://www.w3.org/XML/1998/namespace';

export class NamespaceScopes {
  defaultNs = '';
  readonly #prefixes = new Map<string, string>([['xml', XML_NS]]);
  readonly #undoDepth: number[] = [];
  readonly #undoPrefix: string[] = [];
  readonly #undoPrevious: (string | undefined)[] = [];
  #unboundWarned: Set<string> | null = null;
  readonly #warn: (code: WarningCode, message: string) => void;

  constructor(warn: (code: WarningCode, message: string) => void) {
    this.#warn = warn;
  }

  // What `resolve` found.
  ns = '';
  local = '';

  /**
   * Sets `ns` and `local` for the element name `name` as written. An undeclared prefix keeps the
   * written name, in no namespace, so it can never pass for an element of a real namespace.
   */
  resolve(name: string): void {
    const colon = name.indexOf(':');
    if (colon === -1) {
      this.ns = this.defaultNs;
      this.local = name;
      return;
    }
    const prefix = name.slice(0, colon);
    const bound = this.#prefixes.get(prefix);
    if (bound === undefined) {
      this.unbound(prefix, name);
      this.ns = '';
      this.local = name;
    } else {
      this.ns = bound;
      this.local = name.slice(colon + 1);
    }
  }

  /** Applies the `xmlns` and `xmlns:p` attributes of the element at `depth`. */
  declare(attrs: Record<string, string>, depth: number): void {
    for (const key in attrs) {
      if (key.charCodeAt(0) !== 0x78 || !key.startsWith('xmlns')) continue;
      let prefix: string;
      if (key.length === 5) prefix = '';
      else if (key.charCodeAt(5) === 0x3a) prefix = key.slice(6);
      else continue;
      const uri = attrs[key] as string;
      this.#undoDepth.push(depth);
      this.#undoPrefix.push(prefix);
      if (prefix === '') {
        this.#undoPrevious.push(this.defaultNs);
        this.defaultNs = uri;
      } else {
        this.#undoPrevious.push(this.#prefixes.get(prefix));
        // `xmlns:p=""` undeclares p (XML 1.1); treat p as unbound again.
        if (uri === '') this.#prefixes.delete(prefix);
        else this.#prefixes.set(prefix, uri);
      }
    }
  }

  /** The element at `depth` closed: undoes what it declared. */
  close(depth: number): void {
    const undoDepth = this.#undoDepth;
    while (undoDepth.length > 0 && undoDepth[undoDepth.length - 1] === depth) {
      undoDepth.pop();
      const prefix = this.#undoPrefix.pop() as string;
      const previous = this.#undoPrevious.pop();
      if (prefix === '') this.defaultNs = previous ?? '';
      else if (previous === undefined) this.#prefixes.delete(prefix);
      else this.#prefixes.set(prefix, previous);
    }
  }

  /** Warns once per prefix (a bounded number of them) that `name` uses an undeclared prefix. */
  unbound(prefix: string, name: string): void {
    if (this.#unboundWarned === null) this.#unboundWarned = new Set();
    // Remember a bounded number: a document of ever new prefixes must not grow this set.
    if (this.#unboundWarned.has(prefix) || this.#unboundWarned.size >= 100) return;
    this.#unboundWarned.add(prefix);
    this.#warn(
      'missing-namespace',
      `Namespace prefix "${prefix}" is not declared; <${name}> is read as an element in no namespace`,
    );
  }
}
