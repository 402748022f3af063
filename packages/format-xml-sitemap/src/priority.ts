/**
 * Reads a `<priority>` value: a decimal in [0, 1]. Returns `null` when the text is empty, not a
 * decimal, or out of range (the caller falls back to 0.5 and warns).
 *
 * Accepts what usp's `Decimal()` accepts for a finite decimal: a sign, `.5`, exponents (`7E-1`),
 * underscores between digits (`0.1_0`) and non-ASCII decimal digits (`٠.٧`). The range check is
 * done on the digits, not the float, so `1.00000000000000000001` is out of range as in usp.
 */
export function parsePriority(text: string): number | null {
  // The form generators write (`0.8`, `1.0`), read without trimming or scanning: the general
  // path below gives the same value (a one-digit fraction over 10 is the exact division).
  if (text.length === 3 && text.charCodeAt(1) === 46 /* . */) {
    const whole = text.charCodeAt(0);
    const tenths = text.charCodeAt(2) - 48;
    if (whole === 48 && tenths >>> 0 <= 9) return tenths / 10;
    if (whole === 49 && tenths === 0) return 1;
  }
  let s = text.trim();
  if (s.length === 0) return null;
  // The rare forms are rewritten to plain ASCII once, off the common path.
  if (needsNormalising(s)) {
    const ascii = normalise(s);
    if (ascii === null) return null;
    s = ascii;
  }
  return checkDecimal(s);
}

function needsNormalising(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 127 || c === 95 /* _ */) return true;
  }
  return false;
}

const DIGIT = /^\p{Nd}$/u;

/** Non-ASCII digits to ASCII, underscores between digits removed; `null` for anything else. */
function normalise(s: string): string | null {
  const chars = Array.from(s);
  let out = '';
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i];
    const code = ch.codePointAt(0)!;
    if (ch === '_') {
      if (!isDigitChar(chars[i - 1]) || !isDigitChar(chars[i + 1])) return null;
      continue;
    }
    if (code <= 127) {
      out += ch;
      continue;
    }
    const value = unicodeDigitValue(code);
    if (value === null) return null;
    out += String(value);
  }
  return out;
}

function isDigitChar(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const code = ch.codePointAt(0)!;
  if (code >= 48 && code <= 57) return true;
  return code > 127 && DIGIT.test(ch);
}

/** Unicode decimal digits come in runs of ten starting at zero, so the offset in the run is the value. */
function unicodeDigitValue(code: number): number | null {
  if (!DIGIT.test(String.fromCodePoint(code))) return null;
  let start = code;
  while (start > 0 && DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (code - start) % 10;
}

/** Validates `[+-] (digits [. digits] | . digits) [(e|E) [+-] digits]` and the [0, 1] range. */
function checkDecimal(s: string): number | null {
  const n = s.length;
  let i = 0;
  let negative = false;
  let c = s.charCodeAt(0);
  if (c === 43 || c === 45) {
    negative = c === 45;
    i++;
  }
  // One pass: the first significant digit's place value decides the range, and up to 15
  // significant digits are accumulated so the common forms need no Number(string).
  let mantissa = 0;
  let significant = 0;
  let fracDigits = 0;
  let pointPos = 0; // digits before the point, counted from the first significant one
  let firstDigit = -1;
  let restNonZero = false;
  let digits = 0;
  while (i < n) {
    c = s.charCodeAt(i);
    if (c < 48 || c > 57) break;
    digits++;
    if (significant > 0 || c !== 48) {
      if (significant === 0) firstDigit = c - 48;
      else if (c !== 48) restNonZero = true;
      if (significant < 15) mantissa = mantissa * 10 + (c - 48);
      significant++;
      pointPos++;
    }
    i++;
  }
  if (i < n && s.charCodeAt(i) === 46 /* . */) {
    i++;
    while (i < n) {
      c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      digits++;
      fracDigits++;
      if (significant > 0 || c !== 48) {
        if (significant === 0) firstDigit = c - 48;
        else if (c !== 48) restNonZero = true;
        if (significant < 15) mantissa = mantissa * 10 + (c - 48);
        significant++;
      } else {
        pointPos--;
      }
      i++;
    }
  }
  if (digits === 0) return null;
  let exponent = 0;
  if (i < n) {
    c = s.charCodeAt(i);
    if (c !== 101 && c !== 69) return null;
    i++;
    let expNegative = false;
    c = s.charCodeAt(i);
    if (c === 43 || c === 45) {
      expNegative = c === 45;
      i++;
    }
    const expStart = i;
    while (i < n && isAsciiDigit(s.charCodeAt(i))) i++;
    if (i === expStart || i !== n) return null;
    exponent = Number(s.slice(expStart, i));
    if (expNegative) exponent = -exponent;
  }
  if (significant === 0) return 0; // any zero, `-0` included
  if (negative) return null;
  const place = pointPos + exponent;
  if (place > 1) return null;
  if (place === 1 && (firstDigit !== 1 || restNonZero)) return null;
  // Exact: both operands are exactly representable and IEEE division rounds correctly.
  if (exponent === 0 && significant <= 15 && fracDigits <= 22) return mantissa / POW10[fracDigits];
  return Number(s) + 0;
}

const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);

function isAsciiDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}
