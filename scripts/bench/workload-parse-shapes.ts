/**
 * How long one workload text of a costly shape (docs/SECURITY.md, "Workload text"; test/support/workload-attacks.ts)
 * takes to parse, and the longest pause of this process's event loop meanwhile (a 50 ms tick):
 *
 *   npx tsx scripts/bench/workload-parse-shapes.ts SHAPE SIZE [in-process|thread]
 *
 * SHAPE: brackets (SIZE `[` then SIZE `]`), flow (SIZE bytes of `kN: [` lines), schema (a
 * json_schema of SIZE properties), errors (SIZE items with one unknown field each) or valid (SIZE
 * ordinary items). `in-process` calls parseWorkloadText here; `thread` goes through the parser
 * thread with its default limits. Prints one JSON line. The parser thread is imported only when
 * asked for, so `in-process` also runs on a checkout from before it existed.
 */
import { parseWorkloadText } from '../../src/main/workload/parse-workload';
import {
  itemsEachWithOneError,
  manyValidItems,
  nestedBrackets,
  unclosedFlowLines,
  wideJsonSchema,
} from '../../test/support/workload-attacks';

const SHAPES: Record<string, (size: number) => string> = {
  brackets: nestedBrackets,
  flow: unclosedFlowLines,
  schema: wideJsonSchema,
  errors: itemsEachWithOneError,
  valid: manyValidItems,
};

async function main(): Promise<void> {
  const [shape = '', size = '', mode = 'in-process'] = process.argv.slice(2);
  const make = SHAPES[shape];
  if (!make || !Number(size) || !['in-process', 'thread'].includes(mode)) {
    console.error('usage: workload-parse-shapes.ts brackets|flow|schema|errors|valid SIZE [in-process|thread]');
    process.exit(2);
  }
  const text = make(Number(size));
  // The schema is compiled by the first parse; that is not the text's cost.
  parseWorkloadText('name: warm\ngroups: [{ name: g, items: [{ id: a, prompt: hi }] }]\n', 'warm.yaml');
  const parse =
    mode === 'thread'
      ? await import('../../src/main/workload/bounded-parse').then(
          ({ parseWorkloadOffThread }) =>
            () =>
              parseWorkloadOffThread({ text }, 'shape.yaml'),
        )
      : async () => parseWorkloadText(text, 'shape.yaml');
  let last = performance.now();
  let longestPauseMs = 0;
  const tick = setInterval(() => {
    longestPauseMs = Math.max(longestPauseMs, performance.now() - last);
    last = performance.now();
  }, 50);
  const started = performance.now();
  let outcome = 'valid';
  try {
    await parse();
  } catch (error) {
    const { message, details } = error as Error & { details?: { problems?: unknown[]; total?: number } };
    outcome = `refused: ${message.split('\n').slice(0, 2).join(' ').slice(0, 200)} (${details?.total ?? details?.problems?.length ?? 0} problems)`;
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(tick);
  longestPauseMs = Math.max(longestPauseMs, performance.now() - last);
  console.log(
    JSON.stringify({
      shape,
      size: Number(size),
      chars: text.length,
      mode,
      seconds: Number(seconds.toFixed(2)),
      longestPauseMs: Math.round(longestPauseMs),
      outcome,
    }),
  );
}

void main();
