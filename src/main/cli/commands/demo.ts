import fs from 'node:fs';
import path from 'node:path';
import { userDataDir } from '../../core/paths';
import { ExperimentStore } from '../../experiments/experiment-store';
import { runQuantExperiment } from '../../experiments/quantization';
import { renderExperimentReport } from '../../experiments/report';
import { runWarmCold } from '../../experiments/warm-cold';
import { readWorkloadFile, workloadPath } from '../../workload/parse-workload';
import { experimentTable } from './experiment';
import { runFirstRequest } from '../../demo/first-request';
import { resolveModelRef } from '../../models/demo-models';
import { applySettings } from '../../server/profiles';
import { parseOptions, positiveInteger, type CommandHandler } from '../args';
import { openCliContext } from '../context';
import { formatMs, formatNumber, formatTable } from '../format';

const USAGE = 'inferlab demo [--quick [--model MODEL] [--max-tokens N]] [--profile NAME] [--set FIELD=VALUE ...] [--out DIR] [--db PATH] [--json]';

/**
 * The full demo on the embedded default: a quantization experiment over the three demo
 * models and a warm/cold experiment on prefix-share, tables printed, reports written.
 */
async function fullDemo(values: { db?: string; out?: string; profile?: string; set?: string[]; json?: boolean }, signal: AbortSignal): Promise<number> {
  const context = await openCliContext(values.db);
  try {
    const profile = applySettings(context.store.profiles.get(values.profile ?? 'default'), values.set ?? []);
    const experiments = new ExperimentStore(context.store.db);
    const outDir = path.resolve(values.out ?? path.join(userDataDir(), 'reports'));
    fs.mkdirSync(outDir, { recursive: true });
    const say = (line: string) => !values.json && process.stderr.write(`${line}\n`);
    const common = { runs: context.store.runs, experiments, servers: context.servers, engine: context.engine, profile, concurrency: 1, signal, onStatus: say };
    say('1/2 quantization: demo f16, q8_0 and q4_k_m, each on a fresh server, chat-short, 2 windows in alternating order');
    const quantWorkload = workloadPath('chat-short');
    const quant = await runQuantExperiment({ ...common, baseRef: 'demo:f16', quants: ['f16', 'q8_0', 'q4_k_m'], workload: { def: readWorkloadFile(quantWorkload), file: quantWorkload }, repeats: 2, requestsPerWindow: 8, constraints: { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: null }, kldText: null });
    say('2/2 warm against cold: demo q8_0 on prefix-share (shared 768-token prefixes), 2 windows');
    const warmWorkload = workloadPath('prefix-share');
    const warm = await runWarmCold({ ...common, model: { ref: 'demo:q8_0', path: await resolveModelRef('demo:q8_0') }, workload: { def: readWorkloadFile(warmWorkload), file: warmWorkload }, repeats: 2, requestsPerWindow: 16 });
    const reports = [quant, warm].map((result) => {
      const file = path.join(outDir, `inferlab-${result.kind}-${result.experiment_id.slice(0, 8)}.html`);
      fs.writeFileSync(file, renderExperimentReport(result));
      return file;
    });
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ experiments: [quant, warm], reports }, null, 2)}\n`);
    } else {
      process.stdout.write(`Quantization (synthetic demo model: its text is gibberish, its compute is real)\n${experimentTable(quant)}\n\nWarm against cold\n${experimentTable(warm)}\n\nReports:\n${reports.join('\n')}\n`);
    }
    return 0;
  } finally {
    await context.dispose();
  }
}

export const demoCommand: CommandHandler = async (args, signal) => {
  const { values } = parseOptions(args, {
    quick: { type: 'boolean' }, model: { type: 'string' }, profile: { type: 'string' }, set: { type: 'string', multiple: true },
    'max-tokens': { type: 'string' }, out: { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' },
  }, USAGE);
  if (!values.quick) return fullDemo(values, signal);
  const maxTokens = positiveInteger('max-tokens', values['max-tokens'], 64);
  const modelRef = values.model ?? 'demo:q8_0';
  // Bad input fails here, before the database is opened or anything is started.
  const model = { ref: modelRef, path: await resolveModelRef(modelRef) };
  const context = await openCliContext(values.db);
  try {
    const profile = applySettings(context.store.profiles.get(values.profile ?? 'default'), values.set ?? []);
    const engine = await context.engine();
    const status = (line: string) => {
      if (!values.json) process.stderr.write(`${line}\n`);
    };
    const result = await runFirstRequest({ engine, servers: context.servers, model, profile, store: context.store.runs, maxTokens, signal, onStatus: status });
    const { itl_ms: itl, ...metrics } = result.metrics;
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ run_id: result.runId, model: result.modelRef, cold_start: result.coldStart, ...metrics, itl_ms_count: itl.length, timings: result.timings, prompt_tokens: result.promptTokens, finish_reason: result.finishReason, database: context.dbPath })}\n`);
      return 0;
    }
    const t = result.timings;
    const rows: string[][] = [
      ['model', `${result.modelRef} (${path.basename(result.modelPath)})`],
      ['engine', `${engine.version ?? '?'} ${engine.backend ?? ''}`.trim()],
      ['cold start: spawn → ready', formatMs(result.coldStart?.spawnToReadyMs)],
      ['cold start: spawn → first token', formatMs(result.coldStart?.spawnToFirstTokenMs)],
      ['prompt tokens', String(result.promptTokens ?? '—')],
      ['ttft_ms', formatMs(metrics.ttft_ms)],
      ['tpot_ms', formatMs(metrics.tpot_ms)],
      ['e2e_ms', formatMs(metrics.e2e_ms)],
      ['output tokens', `${metrics.output_tokens ?? '—'} (${metrics.output_tokens_source ?? 'n/a'})`],
      ['decode tokens/s (server)', formatNumber(metrics.decode_tokens_per_s)],
      ['server prompt_ms / predicted_ms', t ? `${t.prompt_ms.toFixed(2)} / ${t.predicted_ms.toFixed(2)}` : '—'],
      ['client_overhead_ms', formatMs(metrics.client_overhead_ms)],
      ['queue_ms (estimate)', formatMs(metrics.queue_ms)],
      ['finish reason', result.finishReason ?? '—'],
      ['stored', `run ${result.runId} in ${context.dbPath}`],
    ];
    process.stdout.write(`${formatTable(rows)}\n\noutput (synthetic model, gibberish by design):\n${result.outputText.slice(0, 240)}\n`);
    return 0;
  } finally {
    await context.dispose();
  }
};
