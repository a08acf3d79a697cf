/**
 * Finds metric-name lists written in source text: an array literal whose elements each begin with
 * a metric name (`['ttft_ms', 'tpot_ms']`, `[{ key: 'ttft_ms', … }, …]`), or a union of string
 * literals that are all metric names (`'ttft_ms' | 'tpot_ms'`). A list that mixes metric names
 * with other names (request columns, a table's rows) is some other list and is not reported.
 * Comments are skipped; quotes of any kind and any spacing are read alike.
 */

export interface MetricList {
  line: number;
  names: string[];
  text: string;
}

interface Token {
  kind: 'string' | 'punct' | 'other';
  value: string;
  start: number;
}

/** Strings (their contents), brackets, commas and bars; comments and everything else dropped or kept as `other`. */
function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (c === '/' && source[i + 1] === '/') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '/' && source[i + 1] === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (c === '/' && /[(,=:[!&|?{};+\-*%<>~^]$|^$|\breturn$/.test(source.slice(0, i).trimEnd().slice(-6))) {
      // A regular expression literal: skipped whole, so a quote or bracket inside it is not read as one.
      i++;
      let inClass = false;
      while (i < source.length && source[i] !== '\n' && (source[i] !== '/' || inClass)) {
        if (source[i] === '\\') i++;
        else if (source[i] === '[') inClass = true;
        else if (source[i] === ']') inClass = false;
        i++;
      }
      i++;
    } else if (c === "'" || c === '"' || c === '`') {
      const start = i;
      let value = '';
      let j = i + 1;
      while (j < source.length && source[j] !== c && (c === '`' || source[j] !== '\n')) {
        if (source[j] === '\\') j++;
        value += source[j] ?? '';
        j++;
      }
      if (source[j] === c) {
        tokens.push({ kind: 'string', value, start });
        i = j + 1;
      } else i++; // A quote that closes on no line of its own: JSX text ("the server's cache"), not a string.
    } else if ('[](){}<>,|:'.includes(c)) {
      tokens.push({ kind: 'punct', value: c, start: i });
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else {
      const start = i;
      while (i < source.length && !/[\s'"`[\](){}<>,|:/]/.test(source[i]!)) i++;
      if (i === start) i++;
      tokens.push({ kind: 'other', value: source.slice(start, i), start });
    }
  }
  return tokens;
}

const OPEN: Record<string, string> = { '[': ']', '(': ')', '{': '}' };

/** The top-level elements of the array literal opened at `open`: each element's tokens. */
function arrayElements(tokens: Token[], open: number): { elements: Token[][]; end: number } {
  const elements: Token[][] = [[]];
  const stack: string[] = [];
  for (let i = open + 1; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'punct' && OPEN[token.value]) stack.push(OPEN[token.value]!);
    else if (token.kind === 'punct' && stack.length > 0 && token.value === stack.at(-1)) stack.pop();
    else if (token.kind === 'punct' && stack.length === 0 && token.value === ']') return { elements, end: i };
    else if (token.kind === 'punct' && stack.length === 0 && token.value === ',') {
      elements.push([]);
      continue;
    }
    elements.at(-1)!.push(token);
  }
  return { elements, end: tokens.length };
}

const lineOf = (source: string, offset: number) => source.slice(0, offset).split('\n').length;

export function findMetricLists(source: string, metricNames: readonly string[]): MetricList[] {
  const metrics = new Set(metricNames);
  const tokens = tokenize(source);
  const found: MetricList[] = [];
  const report = (start: number, end: number, names: string[]) =>
    found.push({ line: lineOf(source, start), names, text: source.slice(start, end).replace(/\s+/g, ' ').slice(0, 120) });

  // Array literals: every element that names anything begins with a metric name, two or more of them.
  tokens.forEach((token, index) => {
    if (token.kind !== 'punct' || token.value !== '[') return;
    const { elements, end } = arrayElements(tokens, index);
    const leading = elements.map((element) => element.find((t) => t.kind === 'string')?.value).filter((name) => name !== undefined);
    const names = leading.filter((name) => metrics.has(name));
    if (names.length >= 2 && names.length === leading.length) report(token.start, (tokens[end]?.start ?? source.length) + 1, names);
  });

  // Unions of string literals: `'a' | 'b' | …`, every one a metric name, two or more.
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.kind !== 'string') continue;
    let j = i;
    const run = [tokens[i]!];
    while (tokens[j + 1]?.value === '|' && tokens[j + 2]?.kind === 'string') {
      run.push(tokens[j + 2]!);
      j += 2;
    }
    if (run.length >= 2 && run.every((t) => metrics.has(t.value)))
      report(
        run[0]!.start,
        run.at(-1)!.start + run.at(-1)!.value.length + 2,
        run.map((t) => t.value),
      );
    i = j;
  }
  return found.sort((a, b) => a.line - b.line);
}
