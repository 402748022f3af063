/** Whether a UTF-16 code unit is an ASCII digit, 0-9 (the scanners of dates and URLs). */
export function isAsciiDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}
