/**
 * The exact-number rule for JSON the API accepts (platform.md "JSON numbers"): a number is
 * accepted only when the value a reader gets back (an IEEE-754 double, which is what JavaScript,
 * the stores and the responses hold) is the number that was sent. `9007199254740993`,
 * `0.10000000000000000001`, `1e400` and `1e-400` are refused; `9007199254740991`, `0.1`, `1.0`
 * (returned as `1`) and `1e300` are accepted. Pure: works on the JSON text, before it is parsed
 * into doubles (after which the lost digits cannot be seen).
 */

/** A number literal of a JSON text that a double cannot hold exactly. */
export interface InexactJsonNumber {
  /** Where it is: object keys and array indexes from the root (`[]` for a bare number). */
  path: (string | number)[];
  /** The literal as written, e.g. `9007199254740993`. */
  literal: string;
}

/** One open array or object (one shape for both, so the scan stays monomorphic). */
interface Frame {
  array: boolean;
  /** Arrays: index of the current element. */
  index: number;
  /** Objects: whether the next string is a key, and where the current key's JSON text is. */
  expectKey: boolean;
  keyStart: number;
  keyEnd: number;
}

/**
 * The first number of `text` (a valid JSON text: parse it first) whose value changes when read as
 * a double, or `undefined` when every number is exact. Numbers are compared by value, not
 * spelling (`1.0`, `1e0` and `1` are the same number; `-0` is `0`). Cost: one pass over the text;
 * string contents are skipped with `indexOf`.
 */
export function findInexactJsonNumber(text: string): InexactJsonNumber | undefined {
  const stack: Frame[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const end = stringEnd(text, i);
      const top = stack[stack.length - 1];
      if (top !== undefined && !top.array && top.expectKey) {
        top.keyStart = i;
        top.keyEnd = end;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      stack.push({ array: false, index: 0, expectKey: true, keyStart: -1, keyEnd: -1 });
      i++;
    } else if (c === 0x5b /* [ */) {
      stack.push({ array: true, index: 0, expectKey: false, keyStart: -1, keyEnd: -1 });
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      i++;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top !== undefined) {
        if (top.array) top.index++;
        else top.expectKey = true;
      }
      i++;
    } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      let exponent = false;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === 0x65 /* e */ || d === 0x45 /* E */) exponent = true;
        else if (!((d >= 0x30 && d <= 0x39) || d === 0x2e /* . */ || d === 0x2b /* + */ || d === 0x2d /* - */)) break;
      }
      // At most 15 characters and no exponent: at most 15 significant digits, always exact.
      if (j - i > 15 || exponent) {
        const literal = text.slice(i, j);
        if (!isExact(literal)) return { path: pathOf(stack, text), literal };
      }
      i = j;
    } else {
      i++; // whitespace, `:`, and the letters of true / false / null
    }
  }
  return undefined;
}

/**
 * Whether the JSON number `literal` reads back as itself: finite as a double, and the double's
 * shortest decimal form is the same value. Literals of at most 15 characters without an exponent
 * (at most 15 significant digits) always are.
 */
export function isExactJsonNumber(literal: string): boolean {
  return isExact(literal);
}

function isExact(literal: string): boolean {
  if (literal.length <= 15 && !/[eE]/.test(literal)) return true;
  const value = Number(literal);
  if (!Number.isFinite(value)) return false;
  return canonical(literal) === canonical(String(value));
}

/** `[-]digits e exponent` with no leading or trailing zero digit; `0` for any zero. */
function canonical(literal: string): string {
  const negative = literal.startsWith('-');
  const body = negative ? literal.slice(1) : literal;
  const e = body.search(/[eE]/);
  const mantissa = e < 0 ? body : body.slice(0, e);
  let exponent = e < 0 ? 0 : Number(body.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const fraction = dot < 0 ? '' : mantissa.slice(dot + 1);
  let digits = (dot < 0 ? mantissa : mantissa.slice(0, dot)) + fraction;
  exponent -= fraction.length;
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  return `${negative ? '-' : ''}${trimmed}e${exponent}`;
}

/** Index just after the closing quote of the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return text.length;
    let backslashes = 0;
    for (let k = quote - 1; k > start && text.charCodeAt(k) === 0x5c; k--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

function pathOf(stack: Frame[], text: string): (string | number)[] {
  return stack.map((frame) => (frame.array ? frame.index : (JSON.parse(text.slice(frame.keyStart, frame.keyEnd)) as string)));
}
