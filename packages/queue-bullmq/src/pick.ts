/** The options among `names` that are set: an absent option stays absent (exact optional types). */
export function pick<T extends object, K extends keyof T>(
  options: T,
  names: readonly K[],
): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const name of names) if (options[name] !== undefined) out[name] = options[name];
  return out;
}
