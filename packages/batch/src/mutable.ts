/** `T` with its `readonly` taken off: a row or state assembled field by field before it is handed on. */
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };
