/**
 * An element's or a field's text, stripped; `null` when nothing is left, so an empty element
 * reads as an absent one. Formats and extensions share it so that they agree on what "empty" is.
 */
export function strippedText(text: string): string | null {
  const s = text.trim();
  return s.length === 0 ? null : s;
}
