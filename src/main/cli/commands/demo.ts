import path from 'node:path';
import { runFirstRequest } from '../../demo/first-request';
import { resolveModelRef } from '../../models/demo-models';
import { applySettings } from '../../server/profiles';
import { parseOptions, positiveInteger, type CommandHandler } from '../args';
import { openCliContext } from '../context';
import { formatMs, formatNumber, formatTable } from '../format';

const USAGE = 'inferlab demo [--model MODEL] [--profile NAME] [--set FIELD=VALUE ...] [--max-tokens N] [--db PATH] [--json]';

export const demoCommand: CommandHandler = async (args, signal) => {
  const { values } = parseOptions(args, {
    model: { type: 'string' }, profile: { type: 'string' }, set: { type: 'string', multiple: true },
    'max-tokens': { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' },
  }, USAGE);
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
