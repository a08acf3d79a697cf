/**
 * Hostile lines for a backtracking regex, generated from the pattern itself: long runs of the characters its
 * classes accept (spaces, digits, word characters), its literals cut short and repeated, runs before and after
 * them, each line also ending in a character that stops a match; each shape at any length. A pattern whose
 * quantifiers overlap (`\s*x*\s+` where x takes spaces, or `.*` after a repeatable prefix) costs far more than
 * linear time on one of them.
 */

/** A regex source as far as generating text for it needs: characters, classes, groups, assertions, repeats. */
type RegexNode =
  | { kind: 'char'; char: string }
  | { kind: 'class'; source: string }
  | { kind: 'group'; branches: RegexNode[][] }
  | { kind: 'assertion' }
  | { kind: 'repeat'; node: RegexNode; min: number };

// The characters a class is tried against: what log lines are made of, and what log patterns' classes take or refuse.
const CANDIDATE_CHARS = [' ', 'a', '0', 'Z', '_', '.', ',', ':', '=', '-', '(', ')', '[', ']', '|', '"', "'", '/', '\t', '@', '!'];
// Refused by every literal, \s, \d and \w, so a line ending in one is a near miss for most patterns; a carriage
// return (which a line split on "\n" may keep) also stops `.` and is where `$` does not match.
const STOP_CHARS = ['\u0001', '\r'];

class RegexReader {
  private at = 0;
  constructor(private readonly source: string) {}

  read(): RegexNode {
    const node = this.alternation();
    if (this.at < this.source.length) throw new Error(`unexpected ${this.source[this.at]} at ${this.at} in /${this.source}/`);
    return node;
  }

  private alternation(): RegexNode {
    const branches = [this.sequence()];
    while (this.source[this.at] === '|') {
      this.at++;
      branches.push(this.sequence());
    }
    return { kind: 'group', branches };
  }

  private sequence(): RegexNode[] {
    const items: RegexNode[] = [];
    while (this.at < this.source.length && this.source[this.at] !== '|' && this.source[this.at] !== ')') {
      const atom = this.atom();
      const min = this.quantifier();
      items.push(min === null ? atom : { kind: 'repeat', node: atom, min });
    }
    return items;
  }

  /** The least count a quantifier allows (null without one); lazy or greedy makes no difference to the text. */
  private quantifier(): number | null {
    const rest = this.source.slice(this.at);
    const found = /^(?:([*+?])|\{(\d+)(?:,\d*)?\})\??/.exec(rest);
    if (!found) return null;
    this.at += found[0].length;
    if (found[2] !== undefined) return Number(found[2]);
    return found[1] === '+' ? 1 : 0;
  }

  private atom(): RegexNode {
    const char = this.source[this.at++]!;
    if (char === '(') return this.group();
    if (char === '[') return this.characterClass();
    if (char === '.') return { kind: 'class', source: '.' };
    if (char === '^' || char === '$') return { kind: 'assertion' };
    if (char !== '\\') return { kind: 'char', char };
    const escaped = this.source[this.at++]!;
    if ('dDwWsS'.includes(escaped)) return { kind: 'class', source: `\\${escaped}` };
    if (escaped === 'b' || escaped === 'B' || /\d/.test(escaped)) return { kind: 'assertion' };
    const named: Record<string, string> = { n: '\n', r: '\r', t: '\t', f: '\f', v: '\v' };
    return { kind: 'char', char: named[escaped] ?? escaped };
  }

  private group(): RegexNode {
    const opening = /^\?(?::|=|!|<=|<!|<[A-Za-z_]\w*>)/.exec(this.source.slice(this.at))?.[0] ?? '';
    this.at += opening.length;
    const inner = this.alternation();
    if (this.source[this.at++] !== ')') throw new Error(`unclosed group in /${this.source}/`);
    const lookaround = ['?=', '?!', '?<=', '?<!'].includes(opening);
    return lookaround ? { kind: 'assertion' } : inner;
  }

  private characterClass(): RegexNode {
    const start = this.at - 1;
    while (this.source[this.at] !== ']') {
      if (this.at >= this.source.length) throw new Error(`unclosed class in /${this.source}/`);
      this.at += this.source[this.at] === '\\' ? 2 : 1;
    }
    this.at++;
    return { kind: 'class', source: this.source.slice(start, this.at) };
  }
}

/** The candidate characters a class accepts, in the order tried. */
function classChars(source: string, flags: string): string[] {
  const whole = new RegExp(`^${source}$`, flags.replace(/[gy]/g, ''));
  return CANDIDATE_CHARS.filter((char) => whole.test(char));
}

const MAX_WITNESSES = 12;

/**
 * Texts the node matches, one per choice it offers: each alternative, an optional part present and absent. A
 * sequence varies one item at a time from its first choice, so the count stays a sum, not a product.
 */
function witnesses(node: RegexNode, flags: string): string[] {
  switch (node.kind) {
    case 'char':
      return [node.char];
    case 'class':
      return classChars(node.source, flags).slice(0, 1);
    case 'assertion':
      return [''];
    case 'repeat': {
      const inner = witnesses(node.node, flags);
      const once = inner.map((text) => text.repeat(Math.max(node.min, 1)));
      return node.min === 0 ? [...once, ''] : once;
    }
    case 'group':
      return [...new Set(node.branches.flatMap((branch) => sequenceWitnesses(branch, flags)))].slice(0, MAX_WITNESSES);
  }
}

function sequenceWitnesses(items: readonly RegexNode[], flags: string): string[] {
  const choices = items.map((item) => witnesses(item, flags));
  if (choices.some((choice) => choice.length === 0)) return [];
  const first = choices.map((choice) => choice[0]!);
  const texts = [first.join('')];
  choices.forEach((choice, index) => {
    for (const other of choice.slice(1)) texts.push([...first.slice(0, index), other, ...first.slice(index + 1)].join(''));
  });
  return texts;
}

/** The first candidate character each class of the pattern accepts. */
function fillChars(node: RegexNode, flags: string): string[] {
  switch (node.kind) {
    case 'class':
      return classChars(node.source, flags).slice(0, 1);
    case 'repeat':
      return fillChars(node.node, flags);
    case 'group':
      return node.branches.flat().flatMap((item) => fillChars(item, flags));
    default:
      return [];
  }
}

const fitTo = (unit: string, length: number) => unit.repeat(Math.ceil(Math.max(length, 0) / unit.length)).slice(0, Math.max(length, 0));

/** Makes one hostile line of any length, so that a shape found costly on short lines can be tried on long ones. */
export type LineMaker = (length: number) => string;

/**
 * The shapes of line built to make `pattern` backtrack: runs of each character its classes take, each prefix and
 * suffix of a text it matches repeated, put before and after such runs, and every shape again with its last
 * character replaced by one that stops a match.
 */
export function adversarialLineMakers(pattern: RegExp): LineMaker[] {
  const tree = new RegexReader(pattern.source).read();
  const fills = [...new Set([' ', ...fillChars(tree, pattern.flags)])];
  const pieces = new Set<string>();
  for (const text of witnesses(tree, pattern.flags)) {
    for (let end = 1; end <= text.length; end++) pieces.add(text.slice(0, end));
    for (let start = 1; start < text.length; start++) pieces.add(text.slice(start));
  }
  const makers: LineMaker[] = fills.map((fill) => (length) => fitTo(fill, length));
  for (const piece of pieces) {
    makers.push((length) => fitTo(piece, length));
    for (const fill of fills) {
      makers.push((length) => (piece + fitTo(fill, length - piece.length)).slice(0, length));
      makers.push((length) => (fitTo(fill, length - piece.length) + piece).slice(0, length));
    }
  }
  return makers.flatMap((make) => [make, ...STOP_CHARS.map((stop) => (length: number) => make(length).slice(0, -1) + stop)]);
}

/** The distinct hostile lines of `length` characters for `pattern` (see adversarialLineMakers). */
export function adversarialLines(pattern: RegExp, length: number): string[] {
  return [...new Set(adversarialLineMakers(pattern).map((make) => make(length)))];
}
