import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startHeadlessServer } from '../../src/main/headless';
import { EXPLAIN_LINE_CHARS, EXPLAIN_MAX_CHARS, explainLlamaLog } from '../../src/main/engines/llamacpp/log-explain';
import { createServices } from '../../src/main/services';
import { rpcAccess } from '../../src/main/services/access';
import { adversarialLineMakers, type LineMaker } from '../support/adversarial-lines';
import { useTempDirs } from '../support/temp';

/**
 * A pasted log (`server explain`, `servers.explainLog`) and llama-server's own output are read by
 * the patterns of src/main/engines/llamacpp/log-*.ts on the service's thread. Each pattern is
 * tried on lines generated from its own shape to make it backtrack, and must stay linear.
 */
const LOG_DIR = path.join(__dirname, '..', '..', 'src', 'main', 'engines', 'llamacpp');
// The files that read llama.cpp's log: the facts, the explanation, and any log-*.ts added beside them.
const LOG_FILES = fs
  .readdirSync(LOG_DIR)
  .filter((name) => /^log-.*\.ts$/.test(name))
  .map((name) => path.join(LOG_DIR, name));

/** Every regex literal in a file, and each `new RegExp` that is not the value of an exported constant. */
function patternsWritten(file: string): { literals: RegExp[]; unexported: string[] } {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const literals: RegExp[] = [];
  const unexported: string[] = [];
  const isExported = (node: ts.Node) =>
    ts.isVariableStatement(node) && node.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword);
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(source);
      const close = text.lastIndexOf('/');
      literals.push(new RegExp(text.slice(1, close), text.slice(close + 1)));
    }
    if (ts.isNewExpression(node) && node.expression.getText(source) === 'RegExp') {
      let statement: ts.Node = node;
      while (statement.parent && !ts.isVariableStatement(statement) && !ts.isSourceFile(statement.parent)) statement = statement.parent;
      if (!isExported(statement)) unexported.push(node.getText(source).slice(0, 80));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { literals, unexported };
}

// The literals of each file, and the exported patterns built at run time (the ready-line pattern joins three).
const written = LOG_FILES.map(patternsWritten);
const exported = (await Promise.all(LOG_FILES.map((file) => import(file) as Promise<Record<string, unknown>>))).flatMap((module) =>
  Object.values(module).filter((value): value is RegExp => value instanceof RegExp),
);
const PATTERNS = [
  ...new Map([...written.flatMap((file) => file.literals), ...exported].map((pattern) => [String(pattern), pattern])).values(),
];

// Measured on a busy two-core VM (the worst line of every pattern, the least of five tries): 8-11 ms per MiB at 512
// characters and at 16,384. Before the rewrite the buffer-line pattern took 161,000 ms per MiB at 512 characters (a
// line of 512 spaces: 80 ms; its cost grew with the length cubed), the failure signature "tensor .* data is not
// within…" 58, and seven others 485 to 2,400 ms per MiB at 16,384 characters (with the length squared).
const MS_PER_MIB = 50;
// What the explanation reads of a line. llama-server's own lines are not cut (the facts, the failure signatures and
// the ready line are read from them, and a model's metadata, its name, is printed in them), so the shapes that cost
// most at 512 characters are tried again at 32 times that: a pattern that scans the rest of the line from each place
// it could start is among the slowest on them already, and costs 32 times more per MiB on the long ones.
const SHORT = EXPLAIN_LINE_CHARS;
const LONG = 32 * EXPLAIN_LINE_CHARS;
const LONG_SHAPES = 64;

/** One try of a pattern on a line, in ms per MiB; the least of `tries`, since a collection or a compile can land in any one. */
function msPerMiB(pattern: RegExp, line: string, tries: number): number {
  let least = Infinity;
  for (let index = 0; index < tries; index++) {
    pattern.lastIndex = 0;
    const started = performance.now();
    pattern.exec(line);
    least = Math.min(least, performance.now() - started);
  }
  return least / (line.length / 2 ** 20);
}

interface Timed {
  cost: number;
  line: string;
  make: LineMaker;
}

/**
 * Times each line once, and again (the least of five) when it is over half the bound; one over the
 * bound after that ends the search (the old buffer pattern would have taken minutes over all of
 * them). Then the slowest is timed again until the slowest is a line so timed: on a busy machine
 * many single tries are slowed by other processes. Slowest first.
 */
function timeLines(pattern: RegExp, lines: { line: string; make: LineMaker }[]): Timed[] {
  const timed: Timed[] = [];
  for (const entry of lines) {
    let cost = msPerMiB(pattern, entry.line, 1);
    if (cost > MS_PER_MIB / 2) cost = msPerMiB(pattern, entry.line, 5);
    timed.push({ ...entry, cost });
    if (cost > MS_PER_MIB) break;
  }
  const settled = new Set<Timed>();
  while (timed.length > 0) {
    const slowest = timed.reduce((worst, entry) => (entry.cost > worst.cost ? entry : worst));
    if (settled.has(slowest)) break;
    slowest.cost = Math.min(slowest.cost, msPerMiB(pattern, slowest.line, 5));
    settled.add(slowest);
  }
  return timed.sort((a, b) => b.cost - a.cost);
}

interface Cost {
  short: Timed;
  long: Timed;
  /** The short lines that took longest, worst first. */
  slowest: string[];
}

const costs = new Map<string, Cost>();

/** The most a pattern costs per MiB on its hostile lines of 512 characters, and on the costliest shapes made long. */
function costOf(pattern: RegExp): Cost {
  const known = costs.get(String(pattern));
  if (known) return known;
  const distinct = new Map<string, LineMaker>();
  for (const make of adversarialLineMakers(pattern)) {
    const line = make(SHORT);
    if (!distinct.has(line)) distinct.set(line, make);
  }
  const short = timeLines(
    pattern,
    [...distinct].map(([line, make]) => ({ line, make })),
  );
  // A pattern already over the bound on short lines is not tried long: the old buffer pattern would take hours.
  const long = timeLines(
    pattern,
    short.slice(0, short[0]!.cost > MS_PER_MIB ? 0 : LONG_SHAPES).map(({ make }) => ({ line: make(LONG), make })),
  );
  const cost = { short: short[0]!, long: long[0] ?? short[0]!, slowest: short.slice(0, 16).map(({ line }) => line) };
  costs.set(String(pattern), cost);
  return cost;
}

/** A log of `chars` characters made of the lines each pattern found slowest, and of 512-character lines of spaces. */
function worstCaseLog(chars: number): string {
  const lines = [' '.repeat(EXPLAIN_LINE_CHARS), ...PATTERNS.flatMap((pattern) => costOf(pattern).slowest)];
  const unit = lines.join('\n') + '\n';
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

describe('the patterns that read llama.cpp logs', () => {
  it('are all reached: every literal of every log-*.ts, and every pattern built at run time is exported', () => {
    expect(LOG_FILES.map((file) => path.basename(file))).toEqual(expect.arrayContaining(['log-facts.ts', 'log-explain.ts']));
    expect(written.flatMap((file) => file.unexported)).toEqual([]);
    expect(PATTERNS.length).toBeGreaterThan(40);
  });

  afterAll(() => {
    const highest = (which: 'short' | 'long') => Math.max(...[...costs.values()].map((cost) => cost[which].cost)).toFixed(1);
    console.log(`the costliest pattern's worst line: ${highest('short')} ms per MiB at ${SHORT} characters, ${highest('long')} at ${LONG}`);
  });

  it.each(PATTERNS.map((pattern) => [String(pattern).slice(0, 70), pattern] as const))(
    `%s costs at most ${MS_PER_MIB} ms per MiB on every line made to make it backtrack, ${SHORT} and ${LONG} characters long`,
    (_, pattern) => {
      const { short, long } = costOf(pattern);
      for (const { cost, line } of [short, long])
        expect(cost, `${line.length}-character line ${JSON.stringify(line.slice(0, 60))}…`).toBeLessThan(MS_PER_MIB);
    },
  );
});

describe('explaining a worst-case log', () => {
  // Measured on a busy two-core VM: 4 MiB in 120-370 ms, and 4 MiB of 512-character lines of spaces in 135-160 ms.
  // Before the rewrite 256 KiB of those lines of spaces took 18-32 s, and 4 MiB would have taken minutes.
  const LIMIT_MS = 1000;

  it(`explains 4 MiB of the slowest lines of every pattern within ${LIMIT_MS} ms`, () => {
    const text = worstCaseLog(EXPLAIN_MAX_CHARS);
    const started = performance.now();
    const explanation = explainLlamaLog(text);
    const took = performance.now() - started;
    console.log(`4 MiB of the slowest lines explained in ${Math.round(took)} ms`);
    expect(explanation.lines).toBeGreaterThan(EXPLAIN_MAX_CHARS / (EXPLAIN_LINE_CHARS + 1));
    expect(took).toBeLessThan(LIMIT_MS);
  });
});

describe('servers.explainLog over RPC', () => {
  const tempDir = useTempDirs();
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /**
   * `serve`'s WebSocket with the token, on the real services. A call is sent as a frame encoded
   * beforehand: the client shares the service's thread here (a browser would not), and encoding
   * 4 MiB of text takes it for a while.
   */
  async function rpcClient() {
    const dataDir = path.join(tempDir(), 'data');
    fs.mkdirSync(dataDir, { recursive: true });
    const container = await createServices({
      dbPath: path.join(dataDir, 'inferlab.db'),
      access: rpcAccess({ ...process.env, INFERLAB_DATA_DIR: dataDir }),
    });
    const rendererDir = path.join(dataDir, 'renderer');
    fs.mkdirSync(rendererDir);
    fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html>');
    const tokenFile = path.join(dataDir, 'serve-token');
    const server = await startHeadlessServer({ container, rendererDir, host: '127.0.0.1', port: 0, tokenFile, log: () => {} });
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/rpc?token=${server.token}`);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    cleanups.push(async () => {
      socket.close();
      await server.close();
      await container.dispose();
    });
    let next = 1;
    const encode = (service: string, method: string, ...args: unknown[]) => {
      const id = next++;
      return { id, frame: JSON.stringify({ id, service, method, args }) };
    };
    const send = ({ id, frame }: { id: number; frame: string }) =>
      new Promise<{ ok: boolean; result?: unknown }>((resolve) => {
        const onMessage = (data: WebSocket.RawData) => {
          const message = JSON.parse(data.toString()) as { id?: number; ok: boolean; result?: unknown };
          if (message.id !== id) return;
          socket.off('message', onMessage);
          resolve(message);
        };
        socket.on('message', onMessage);
        socket.send(frame);
      });
    return { encode, send };
  }

  it('answers another call within a second while it explains a 4 MiB worst-case log (the most the method accepts)', async () => {
    const { encode, send } = await rpcClient();
    const text = worstCaseLog(EXPLAIN_MAX_CHARS);
    // Once unmeasured: the servers service is built on its first call, and the garbage of making the log is
    // collected (this test and the service share a heap), neither of which is the explanation's.
    expect((await send(encode('servers', 'explainLog', text))).ok).toBe(true);
    const explain = encode('servers', 'explainLog', text);
    // The explanation runs on the service's thread: every other call waits for it, and so do signals.
    const started = performance.now();
    let finished = false;
    const pending = send(explain).finally(() => (finished = true));
    const answeredAt = [started];
    while (!finished) {
      await send(encode('servers', 'defaultProfile'));
      answeredAt.push(performance.now());
    }
    const reply = await pending;
    const took = performance.now() - started;
    const longestSilence = Math.max(...answeredAt.slice(1).map((at, index) => at - answeredAt[index]!));
    console.log(
      `explainLog of 4 MiB: ${Math.round(took)} ms, ${answeredAt.length - 1} calls answered, the longest silence ${Math.round(longestSilence)} ms`,
    );
    expect(reply.ok).toBe(true);
    expect(longestSilence).toBeLessThan(1000);
  }, 60_000);
});
