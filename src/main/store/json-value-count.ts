const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/**
 * The objects, arrays and strings (keys included) in a JSON text, counted from its bytes
 * without parsing it, up to one past `stopAfter`. They are what makes a parsed document
 * larger than its text: `{},` is three bytes of text and about sixty bytes of heap, so 16 MiB
 * of them parse for seconds into half a gigabyte, while the same bytes of text or of numbers
 * parse in a fraction of that into about their own size. Counting first lets a reader refuse
 * such a text before JSON.parse builds it. A string is skipped with `indexOf` to its closing
 * quote, so a line of long strings costs little more than the copy; text that is not valid
 * JSON is counted somehow and left to JSON.parse to refuse.
 */
export function countJsonValues(bytes: Uint8Array, stopAfter: number): number {
  let count = 0;
  let at = 0;
  while (at < bytes.length && count <= stopAfter) {
    const byte = bytes[at]!;
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) count += 1;
    else if (byte === QUOTE) {
      count += 1;
      at = closingQuote(bytes, at);
      if (at === -1) return count;
    }
    at += 1;
  }
  return count;
}

/** Where the string opened at `open` ends: the next quote not escaped by an odd run of backslashes, or -1. */
function closingQuote(bytes: Uint8Array, open: number): number {
  let at = open;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at === -1) return -1;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
}
