/**
 * An empty array whose elements V8 already keeps as objects, for arrays a hot function pushes
 * objects to. An array literal starts as an array of small integers (V8 keeps that kind per
 * literal and changes it once an object is stored): a compiled function that pushed objects to
 * earlier arrays is thrown away and compiled again when it meets one made before its literal
 * first held an object, or by another literal, in each thread.
 */
export function objectArray<T extends object>(): T[] {
  return EMPTY.slice() as T[];
}

// `slice` keeps the elements kind of the array it copies.
const EMPTY: object[] = [{}].slice(0, 0);
