/**
 * How long each built-in workload that generates its prompts takes to resolve against a real
 * llama-server's tokenizer: the first time in a process, and again under the same tokenizer,
 * as every window of an experiment after the first does (`npm run bench -- resolve`).
 */
import crypto from 'node:crypto';
import { locateEngine } from '../../src/main/engines/llamacpp/locate-engine';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { listBuiltinWorkloads, readWorkloadFile, workloadPath } from '../../src/main/workload/parse-workload';
import { resolveWorkload } from '../../src/main/workload/resolve-workload';
import { llamaServerTokenCounter, rememberingTokenCounter, type TokenCounter } from '../../src/main/workload/token-counter';
import type { BenchRow } from './bench-row';
import { startManagedBenchServer } from './managed-bench-server';

const MODEL = 'demo:q8_0';

export async function workloadResolveTimes(): Promise<BenchRow[]> {
  const { engine } = await locateEngine();
  if (!engine) return [{ figure: 'workload resolve', value: 'skipped: no llama-server (run ./bin/inferlab setup)', target: '' }];
  const server = await startManagedBenchServer(engine, MODEL, defaultProfile());
  const rows: BenchRow[] = [];
  try {
    const tokenizer = llamaServerTokenCounter({ baseUrl: server.baseUrl, headers: server.headers });
    // A name no earlier resolve in this process used, so the first resolve asks the server for everything.
    const identity = `bench ${crypto.randomUUID()}`;
    for (const name of listBuiltinWorkloads()) {
      const file = await workloadPath(name);
      const def = await readWorkloadFile(file);
      if (!def.groups.some((group) => group.generate && !('trace' in group.generate) && !('sharegpt' in group.generate))) continue;
      const timed = async () => {
        const counted = countingQuestions(tokenizer);
        const started = performance.now();
        await resolveWorkload(def, file, rememberingTokenCounter(counted, identity));
        return { ms: performance.now() - started, questions: counted.questions };
      };
      const [first, again] = [await timed(), await timed()];
      rows.push({
        figure: `resolve ${name} against ${MODEL}'s tokenizer: first in a process / again (questions to /tokenize)`,
        value: `${first.ms.toFixed(0)} ms (${first.questions}) / ${again.ms.toFixed(1)} ms (${again.questions})`,
        target: 'again: no questions',
      });
    }
  } finally {
    await server.dispose();
  }
  return rows;
}

function countingQuestions(counter: TokenCounter): TokenCounter & { questions: number } {
  const counting = {
    exact: counter.exact,
    questions: 0,
    count: (text: string) => {
      counting.questions++;
      return counter.count(text);
    },
  };
  return counting;
}
