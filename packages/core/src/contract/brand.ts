/**
 * Two copies of core can meet in one program: usp installed with one version, a plugin with
 * another beside it. A plugin then builds its dates with its own `SitemapDate` and throws its own
 * `InvalidOptionError`, and plain `instanceof` against usp's copy is false (a video's
 * `publicationDate` came back from the file page store as a string). So the classes values cross
 * packages in answer `instanceof` by a brand registered under `Symbol.for`, which every copy of
 * core shares; an object of the same copy still passes the ordinary prototype check first.
 * A brand names a shape: what a branded class holds is part of core's contract across versions.
 */
const BRAND = Symbol.for('@usp-ts/core.brand');

type AnyClass = abstract new (...args: never[]) => unknown;

/** Marks `cls` (not its subclasses: each brands itself) as the class named `name` in every copy. */
export function brandClass(cls: AnyClass, name: string): void {
  Object.defineProperty(cls.prototype, BRAND, { value: name, enumerable: false });
}

/** `value instanceof cls`, also true for an instance of the same branded class from another copy. */
export function isBranded(cls: AnyClass, value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  // Checked before the prototype walk: most values asked about (plain data) carry no brand.
  const found = (value as Record<symbol, unknown>)[BRAND];
  if (found === undefined) return Function.prototype[Symbol.hasInstance].call(cls, value);
  const proto = cls.prototype as Record<symbol, unknown>;
  if (!Object.hasOwn(proto, BRAND)) return Function.prototype[Symbol.hasInstance].call(cls, value);
  const wanted = proto[BRAND];
  if (found === wanted) return true;
  // A subclass instance (`InvalidOptionError` asked as `UspError`): look up its chain.
  for (let p = Object.getPrototypeOf(value); p !== null; p = Object.getPrototypeOf(p)) {
    if (Object.hasOwn(p, BRAND) && p[BRAND] === wanted) return true;
  }
  return false;
}
