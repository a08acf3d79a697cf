import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ENGINE_BACKENDS, type EngineBackend } from '../shared/contract/engine';
import { ErrorCode } from '../shared/errors';
import { AppError, exitStatusFor, toErrorShape } from './core/errors';
import { projectRoot, resolveDatabasePath } from './core/paths';
import { formatMs, formatNumber, formatTable } from './cli/format';
import { stderrBuildProgress } from './cli/progress';
import { runFirstRequest } from './demo/first-request';
import { electronBinaryPath, runDoctor } from './doctor';
import { locateEngine } from './engines/llamacpp/locate-engine';
import { resolveModelRef } from './models/demo-models';
import { runSetup } from './setup/setup';
import { openDatabase } from './store/database';
import { RunStore } from './store/run-store';

const USAGE = `Usage: inferlab <command> [options]

Commands:
  doctor [--json] [--db PATH]                 what works, what is missing, and how to fix it
  setup [--force] [--backend cpu|cuda|vulkan|metal]
                                              build or locate llama.cpp, make the demo models
  demo [--model MODEL] [--max-tokens N] [--db PATH] [--json]
                                              serve a model, measure one streamed completion, store it
  app                                         open the desktop app (needs Electron's binary)

MODEL is a GGUF path or demo:f16, demo:q8_0, demo:q4_k_m.
Exit status: 0 success, 2 invalid input or usage, 1 runtime failure.`;

type Handler = (args: string[], signal: AbortSignal) => Promise<number>;

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new AppError(ErrorCode.Usage, `${(error as Error).message}\n\n${USAGE}`);
  }
}

function positiveInteger(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new AppError(ErrorCode.Usage, `--${name} must be a positive integer, got "${raw}"`);
  return value;
}

const doctor: Handler = async (args) => {
  const values = parse(args, { json: { type: 'boolean' }, db: { type: 'string' } });
  const report = await runDoctor({ dbPath: values.db });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    const mark = { ok: 'ok', missing: 'MISSING', warning: 'warn' } as const;
    const rows = report.checks.map((check) => [mark[check.status], check.label, check.detail]);
    process.stdout.write(`${formatTable(rows)}\n`);
    const fixes = report.checks.filter((check) => check.fix);
    if (fixes.length > 0) process.stdout.write(`\nTo fix:\n${fixes.map((check) => `  ${check.label}: ${check.fix}`).join('\n')}\n`);
  }
  return report.checks.some((check) => check.status === 'missing') ? 1 : 0;
};

const setup: Handler = async (args) => {
  const values = parse(args, { force: { type: 'boolean' }, backend: { type: 'string' }, 'from-npm-install': { type: 'boolean' } });
  const backend = values.backend as EngineBackend | undefined;
  if (backend !== undefined && !ENGINE_BACKENDS.includes(backend)) throw new AppError(ErrorCode.Usage, `--backend must be one of ${ENGINE_BACKENDS.join(', ')}, got "${values.backend}"`);
  const log = (line: string) => process.stderr.write(`inferlab setup: ${line}\n`);
  if (values['from-npm-install'] && process.env.INFERLAB_SKIP_SETUP === '1') {
    log('skipped (INFERLAB_SKIP_SETUP=1); run ./bin/inferlab setup later');
    return 0;
  }
  try {
    const started = performance.now();
    const result = await runSetup({ backend, force: values.force, progress: stderrBuildProgress(), log });
    log(`engine ready: ${result.engine.serverPath} (${result.engine.version ?? 'unknown version'}) in ${result.engineSeconds.toFixed(2)} s`);
    log(`demo models: ${result.demoModels.map((state) => state.ref).join(', ')}`);
    log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return 0;
  } catch (error) {
    if (!values['from-npm-install']) throw error;
    // npm ci must still complete: the rest of the app (UI, endpoints) works without a local engine.
    log(`could not finish: ${(error as Error).message}`);
    log('npm install continues; fix the above, then run ./bin/inferlab setup (./bin/inferlab doctor shows the state)');
    return 0;
  }
};

const demo: Handler = async (args, signal) => {
  const values = parse(args, { model: { type: 'string' }, 'max-tokens': { type: 'string' }, db: { type: 'string' }, json: { type: 'boolean' } });
  const maxTokens = positiveInteger('max-tokens', values['max-tokens'], 64);
  const modelRef = values.model ?? 'demo:q8_0';
  const model = { ref: modelRef, path: await resolveModelRef(modelRef) };
  const { engine, problems } = await locateEngine();
  if (!engine) throw new AppError(ErrorCode.EngineMissing, `No llama-server: ${problems.join('; ')}. Run ./bin/inferlab setup first.`);
  const dbPath = resolveDatabasePath(values.db);
  const db = openDatabase(dbPath);
  try {
    const store = new RunStore(db);
    store.markAbandonedRunsInterrupted();
    const status = (line: string) => {
      if (!values.json) process.stderr.write(`${line}\n`);
    };
    const result = await runFirstRequest({ engine, model, store, maxTokens, signal, onStatus: status });
    if (values.json) {
      process.stdout.write(`${JSON.stringify({ run_id: result.runId, model: result.modelRef, server_ready_ms: result.serverReadyMs, ...result.metrics, itl_ms: undefined, timings: result.timings, prompt_tokens: result.promptTokens, finish_reason: result.finishReason, database: dbPath })}\n`);
      return 0;
    }
    const m = result.metrics;
    const t = result.timings;
    const rows: string[][] = [
      ['model', `${result.modelRef} (${path.basename(result.modelPath)})`],
      ['engine', `${engine.version ?? '?'} ${engine.backend ?? ''}`.trim()],
      ['server ready', formatMs(result.serverReadyMs)],
      ['prompt tokens', String(result.promptTokens ?? '—')],
      ['ttft_ms', formatMs(m.ttft_ms)],
      ['tpot_ms', formatMs(m.tpot_ms)],
      ['e2e_ms', formatMs(m.e2e_ms)],
      ['output tokens', `${m.output_tokens ?? '—'} (${m.output_tokens_source ?? 'n/a'})`],
      ['decode tokens/s (server)', formatNumber(m.decode_tokens_per_s)],
      ['server prompt_ms / predicted_ms', t ? `${t.prompt_ms.toFixed(2)} / ${t.predicted_ms.toFixed(2)}` : '—'],
      ['client_overhead_ms', formatMs(m.client_overhead_ms)],
      ['queue_ms (estimate)', formatMs(m.queue_ms)],
      ['finish reason', result.finishReason ?? '—'],
      ['stored', `run ${result.runId} in ${dbPath}`],
    ];
    process.stdout.write(`${formatTable(rows)}\n\noutput (synthetic model, gibberish by design):\n${result.outputText.slice(0, 240)}\n`);
    return 0;
  } finally {
    db.close();
  }
};

const app: Handler = async () => {
  const electron = electronBinaryPath();
  if (!electron) {
    process.stderr.write(
      "Electron's binary is not installed (its installer downloads it from outside the npm registry, which this machine cannot reach).\n" +
        'On a machine with internet access run: node node_modules/electron/install.js, then npm start.\n' +
        'Meanwhile the CLI works (./bin/inferlab doctor, ./bin/inferlab demo); the browser UI (inferlab serve) is on the roadmap.\n',
    );
    return 1;
  }
  const root = projectRoot();
  const child = spawn(path.join(root, 'node_modules', '.bin', 'electron-vite'), ['preview'], { cwd: root, stdio: 'inherit' });
  return new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
};

const COMMANDS: Record<string, Handler> = { doctor, setup, demo, app };

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 2;
  }
  const handler = COMMANDS[command];
  if (!handler) {
    process.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`);
    return 2;
  }
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    return await handler(rest, controller.signal);
  } catch (error) {
    const shape = toErrorShape(error);
    process.stderr.write(`inferlab ${command}: ${shape.message}\n`);
    if (shape.code === ErrorCode.Internal && error instanceof Error && error.stack && process.env.INFERLAB_DEBUG) process.stderr.write(`${error.stack}\n`);
    return controller.signal.aborted ? 130 : exitStatusFor(error);
  } finally {
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
}
