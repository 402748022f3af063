/** `chunks` joined into one new array (`total`: their length, when the caller knows it). */
export function concatBytes(chunks: readonly Uint8Array[], total?: number): Uint8Array {
  const length = total ?? chunks.reduce((sum, c) => sum + c.length, 0);
  const out = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
