import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type {
  AppEvents,
  FirstRequestResult,
  TaskProgress,
  RunDetail,
  RunExport,
  ServerProfile,
  SettingsInfo,
} from '../../src/shared/contract';
import { runExportFiles } from '../../src/shared/run-export-files';
import { taskIsOver } from '../../src/shared/tasks';
import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { SERVICE_CONTRACT } from '../../src/shared/contract/services';
import type { MetricHistory } from '../../src/shared/contract/history';
import type { Race } from '../../src/shared/race';
import type { Comparison } from '../../src/shared/contract/compare';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';
import { createServices, type ServiceContainer } from '../../src/main/services';
import { shellAccess } from '../../src/main/services/access';
import { openDatabase } from '../../src/main/store/database';
import { ExperimentStore } from '../../src/main/store/experiment-store';
import { RunStore } from '../../src/main/store/run-store';
import { summarizeCondition } from '../../src/main/experiments/condition-summary';
import { demoRunSpec } from '../support/specs';
import { useTempDirs } from '../support/temp';
import { startStandInHub, tinyGgufRepoFiles } from '../support/stand-in-hub';
import { sharedProtocolFields } from '../support/experiment-result';

const tempDir = useTempDirs();
let container: ServiceContainer | null = null;
afterAll(async () => container?.dispose());

/**
 * Every method of the contract, called the way the UI calls it (through the dispatcher) against
 * the real services, engine and database; the walk fails when a method is added to the contract
 * and not exercised here.
 */
describe('every service method through the dispatcher', () => {
  it('answers each call with its declared result, or with the error code a bad call earns', async () => {
    const dir = tempDir();
    const dbPath = path.join(dir, 'methods.db');
    container = await createServices({ dbPath, access: shellAccess(), idleTelemetry: false });
    const events: { name: string; payload: unknown }[] = [];
    container.events.on((event) => events.push(event));
    const dispatcher = new RpcDispatcher(container.services);
    const called = new Set<string>();
    const call = async <T>(service: string, method: string, ...args: unknown[]): Promise<T> => {
      called.add(`${service}.${method}`);
      const reply = await dispatcher.dispatch({ service, method, args });
      if (!reply.ok) throw Object.assign(new Error(reply.error.message), { code: reply.error.code });
      return reply.result as T;
    };
    const failure = async (service: string, method: string, ...args: unknown[]) =>
      call(service, method, ...args).then(
        () => 'no error',
        (error: Error & { code: string }) => error.code,
      );

    const settings = await call<SettingsInfo>('settings', 'get');
    expect(settings.databasePath).toBe(dbPath);
    expect(settings.engine?.serverPath).toMatch(/llama-server$/);
    // A profile that does not exist is refused before the config file is touched (saving is covered in test/unit/settings.test.ts).
    expect(await failure('settings', 'update', { defaultProfile: 'no-such-profile' })).toBe('not_found');

    const report = await call<{ checks: unknown[]; databasePath: string }>('doctor', 'report');
    expect(report.databasePath).toBe(dbPath);
    expect(report.checks.length).toBeGreaterThan(0);

    // Engine setup finds the cached build: a job whose progress ends finished.
    const setup = await call<{ jobId: string }>('engine', 'setup', { backend: 'cpu' });
    await expect
      .poll(
        () =>
          events.some(
            (event) =>
              event.name === 'task.progress' &&
              (event.payload as TaskProgress).jobId === setup.jobId &&
              (event.payload as TaskProgress).phase === 'finished',
          ),
        { timeout: 60_000 },
      )
      .toBe(true);
    // The one task list holds the ended setup; a cancel of a task that ended does nothing.
    expect(await call('tasks', 'list')).toEqual(
      expect.arrayContaining([expect.objectContaining({ jobId: setup.jobId, kind: 'setup', phase: 'finished' })]),
    );
    await call('tasks', 'cancel', setup.jobId);

    const scan = await call<{ models: { path: string; valid: boolean }[] }>('models', 'scan', null, { hash: false });
    expect(scan.models.some((model) => model.valid && model.path.endsWith('demo-q8_0.gguf'))).toBe(true);
    expect(await failure('models', 'quantize', path.join(dir, 'absent.gguf'), ['Q4_0'])).toMatch(/not_found|invalid_input/);
    // A plan of the demo model: it fits a listed GPU (the nvidia-smi stand-in's where the machine has none), else runs on the CPU.
    const demoFile = scan.models.find((model) => model.path.endsWith('demo-q8_0.gguf'))!.path;
    const plan = await call<{ devices: { kind: string }[]; candidates: { label: string; fit: { verdict: string } }[] }>('models', 'plan', {
      source: demoFile,
      contextPerSlot: 2048,
    });
    const verdict = plan.devices.some((device) => device.kind === 'gpu') ? 'fits' : 'cpu';
    expect(plan.candidates).toEqual([expect.objectContaining({ label: 'Q8_0', fit: expect.objectContaining({ verdict }) })]);
    expect(await failure('models', 'plan', { source: demoFile, parallel: 0 })).toBe('invalid_input');
    expect(await failure('models', 'plan', { source: 'hf:no-repo-name' })).toBe('usage');

    // A pull from the stand-in hub into a cache of this test's own; its progress ends finished, and the cache then knows it.
    const hub = await startStandInHub({ repos: { 'tiny/Tiny-GGUF': { files: tinyGgufRepoFiles() } } });
    const hubEnv = { HF_ENDPOINT: process.env.HF_ENDPOINT, HF_HUB_CACHE: process.env.HF_HUB_CACHE };
    process.env.HF_ENDPOINT = hub.url;
    process.env.HF_HUB_CACHE = path.join(dir, 'hf-hub');
    try {
      const pull = await call<{ jobId: string }>('models', 'pull', { source: 'hf:tiny/Tiny-GGUF', quants: ['Q4_K_M'] });
      await expect
        .poll(
          () =>
            events.find(
              (event) =>
                event.name === 'task.progress' &&
                (event.payload as TaskProgress).jobId === pull.jobId &&
                taskIsOver((event.payload as TaskProgress).phase),
            )?.payload,
          { timeout: 60_000 },
        )
        .toMatchObject({ kind: 'pull', phase: 'finished', error: null });
      const cached = await call<{ label: string; files: string[] }[]>('models', 'cached', 'hf:tiny/Tiny-GGUF', ['all']);
      expect(cached.map((model) => model.label)).toEqual(['Q4_K_M']);
      expect(cached[0]!.files[0]!.startsWith(path.join(dir, 'hf-hub'))).toBe(true);
      expect(await failure('models', 'pull', { source: 'tiny/Tiny-GGUF', quants: [] })).toBe('invalid_input');
      expect(await failure('models', 'pull', { source: 'hf:tiny/Tiny-GGUF', quants: ['Q2_K'] })).toBe('not_found');
      const found = await call<{ source: string }[]>('models', 'search', 'tiny');
      expect(found.map((match) => match.source)).toEqual(['hf:tiny/Tiny-GGUF']);
      expect(await failure('models', 'search', 'q')).toBe('invalid_input');
    } finally {
      Object.assign(process.env, hubEnv);
      for (const [name, value] of Object.entries(hubEnv)) if (value === undefined) delete process.env[name];
      await hub.close();
    }
    await call('tasks', 'cancel', 'no-such-job');
    const quantTypes = await call<{ type: string; needsImportanceMatrix: boolean }[]>('models', 'quantTypes');
    expect(quantTypes.map((entry) => entry.type)).toEqual(expect.arrayContaining(['Q4_K_M', 'Q8_0', 'IQ4_XS']));
    expect(quantTypes.find((entry) => entry.type === 'IQ2_XXS')?.needsImportanceMatrix).toBe(true);

    const profile = await call<ServerProfile>('servers', 'defaultProfile');
    expect((await call<ServerProfile[]>('servers', 'profiles')).map((saved) => saved.name)).toContain('default');
    expect(await call('servers', 'validateProfile', { ...profile, contextSize: -1 }, null)).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'contextSize' })]),
    );
    await call('servers', 'saveProfile', { ...profile, name: 'small', contextSize: 1024 });
    expect(await call('servers', 'deleteProfile', 'small')).toBe(true);
    const started = await call<{ id: string }>('servers', 'start', 'demo:q8_0', { ...profile, contextSize: 1024 });
    await expect
      .poll(
        async () => (await call<{ id: string; state: string }[]>('servers', 'list')).find((server) => server.id === started.id)?.state,
        { timeout: 30_000 },
      )
      .toBe('ready');
    const logTail = await call<string[]>('servers', 'logs', started.id);
    expect(logTail.length).toBeGreaterThan(0);
    // The server's own log, explained: its slots and context, as the Server view shows a pasted one.
    expect(await call('servers', 'explainLog', logTail.join('\n'))).toMatchObject({ slots: expect.any(Number), warnings: [] });
    expect((await call<{ state: string }>('servers', 'stop', started.id)).state).toBe('stopped');

    const workloads = await call<{ name: string }[]>('workloads', 'list');
    expect(workloads.map((workload) => workload.name)).toContain('chat-short');
    const text = (await call<{ text: string }>('workloads', 'read', 'chat-short')).text;
    expect((await call<{ ok: boolean }>('workloads', 'validate', text)).ok).toBe(true);

    const first = await call<FirstRequestResult>('demo', 'firstRequest', { model: 'demo:q8_0', maxTokens: 4 });
    const second = await call<FirstRequestResult>('demo', 'firstRequest', { model: 'demo:q8_0', maxTokens: 4 });
    expect(first.metrics.output_tokens).toBe(4);
    expect((await call<{ runId: string }[]>('runs', 'list')).map((run) => run.runId)).toEqual([second.runId, first.runId]);
    expect(await call('runs', 'page', { offset: 1, limit: 1, search: 'demo q8' })).toEqual({
      items: [expect.objectContaining({ runId: first.runId })],
      total: 2,
      skipped: [],
    });
    expect(await failure('runs', 'page', { offset: -1, limit: 1 })).toBe('invalid_input');
    const detail = await call<RunDetail>('runs', 'get', first.runId);
    expect(detail.item.requests).toBe(1);
    // A first request stores the same summary as any run, so it lists, compares and exports alike.
    expect(detail.summary).toMatchObject({ requests: { attempted: 1, completed: 1 }, metrics: { ttft_ms: { n: 1 } } });
    expect((await call<{ requestsJsonl: string }>('runs', 'exportRun', first.runId)).requestsJsonl.trim().split('\n')).toHaveLength(1);
    const comparison = await call<Comparison>('runs', 'compare', [first.runId, second.runId]);
    expect(comparison.runs).toHaveLength(2);
    // Energy and bandwidth sit beside the latencies, one value per run (null with no RAPL or GPU, as here for energy).
    expect(comparison.rows.map((row) => row.metric)).toEqual(
      expect.arrayContaining(['energy per output token', 'decode bandwidth', 'decode bandwidth of peak']),
    );
    const race = await call<Race>('runs', 'race', [first.runId, second.runId]);
    expect(race.lanes.map((lane) => lane.runId)).toEqual([first.runId, second.runId]);
    expect(await failure('runs', 'race', [first.runId])).toBe('invalid_input');
    expect(await failure('runs', 'race', [first.runId, 'a:b:c'])).toBe('invalid_input');
    // A live race is refused before any lane runs: one lane (the schema), a blank prompt, a model that is not there.
    const lanes = [{ model: 'demo:q8_0' }, { model: 'demo:q4_k_m' }];
    expect(await failure('runs', 'startRace', { lanes: lanes.slice(0, 1), prompt: 'hi', maxTokens: 4, together: false })).toBe(
      'invalid_input',
    );
    expect(await failure('runs', 'startRace', { lanes, prompt: ' \n', maxTokens: 4, together: true })).toBe('invalid_input');
    expect(
      await failure('runs', 'startRace', { lanes: [lanes[0], { model: 'demo:q2' }], prompt: 'hi', maxTokens: 4, together: false }),
    ).toBe('invalid_input');
    const history = await call<MetricHistory>('runs', 'history', { metric: 'ttft_ms:p50', model: 'demo:q8_0' });
    expect(
      history.configurations.flatMap((configuration) => configuration.builds.flatMap((build) => build.runs)).map((run) => run.runId),
    ).toEqual(expect.arrayContaining([first.runId, second.runId]));
    expect(await failure('runs', 'history', { metric: 'ttft_ms:p42' })).toBe('invalid_input');
    const goodRun = demoRunSpec({ requests: 1 });
    expect(await failure('runs', 'start', { ...goodRun, workload: 'no-such-workload' })).toBe('not_found');
    expect(await call('runs', 'validate', goodRun)).toEqual({ problem: null });
    expect(await call('runs', 'validate', { ...goodRun, rate: 2 })).toEqual({ problem: expect.stringMatching(/concurrency|rate/) });
    await call('tasks', 'cancel', 'no-such-job');
    const secondExport = path.join(dir, 'second-export');
    fs.mkdirSync(secondExport);
    for (const file of runExportFiles(await call<RunExport>('runs', 'exportRun', second.runId)))
      fs.writeFileSync(path.join(secondExport, file.name), file.content);
    expect(await call('runs', 'remove', second.runId)).toBe(true);
    expect(await call('runs', 'remove', second.runId)).toBe(false);
    // The removed run comes back from its export, once.
    expect(await call('runs', 'importRun', secondExport)).toEqual({
      runId: second.runId,
      requests: 1,
      telemetrySeries: expect.any(Number),
      importedFrom: secondExport,
    });
    expect(await failure('runs', 'importRun', secondExport)).toBe('invalid_input');
    expect(await failure('runs', 'importRun', path.join(dir, 'no-such-export'))).toBe('not_found');
    const parquet = path.join(dir, 'parquet');
    expect(await call('runs', 'exportParquet', { runId: second.runId, folder: parquet })).toMatchObject({
      folder: parquet,
      schema_version: 1,
      tables: expect.arrayContaining([{ name: 'requests', file: path.join(parquet, 'requests.parquet'), rows: 1 }]),
    });
    expect(await failure('runs', 'exportParquet', { runId: 'no-such-run', folder: parquet })).toBe('not_found');
    expect(await failure('runs', 'exportParquet', { runId: second.runId, experimentId: 'x', folder: parquet })).toBe('invalid_input');
    expect(await failure('runs', 'exportParquet', { format: 'csv' })).toBe('invalid_input');

    // A finished experiment, its condition summarized from a stored run as the protocols do, to list, read, report and decide on.
    const db = openDatabase(dbPath);
    const store = new ExperimentStore(db);
    const experimentId = store.create('quant', { note: 'seeded' });
    const condition = summarizeCondition(new RunStore(db), 'q8_0', [first.runId]).result;
    const result: ExperimentResult = {
      experiment_id: experimentId,
      kind: 'quant',
      status: 'completed',
      protocol: sharedProtocolFields('quant'),
      conditions: [condition],
      verdicts: [],
      recommendation: { choice: 'q8_0', reason: 'seeded', excluded: [] },
    };
    store.finish(experimentId, 'completed', result);
    db.close();
    expect((await call<{ experimentId: string }[]>('experiments', 'list')).map((item) => item.experimentId)).toContain(experimentId);
    expect((await call<ExperimentResult>('experiments', 'get', experimentId.slice(0, 8))).recommendation.choice).toBe('q8_0');
    expect(await call('experiments', 'report', experimentId)).toEqual({
      fileName: `inferlab-quant-${experimentId.slice(0, 8)}.html`,
      html: expect.stringMatching(/^<!doctype html>[\s\S]*q8_0/i),
    });
    expect((await call<{ chosen: string }>('experiments', 'decide', experimentId, 'q8_0', 'half the memory', 'test')).chosen).toBe('q8_0');
    expect(await failure('experiments', 'decide', experimentId, 'f32', 'no such condition', 'test')).toBe('invalid_input');
    expect((await call<{ reason: string }[]>('experiments', 'decisions')).map((record) => record.reason)).toEqual(['half the memory']);
    expect(
      await failure('experiments', 'start', {
        kind: 'quant',
        model: 'demo:f16',
        quants: ['f16'],
        workload: 'chat-short',
        repeats: 1,
        requestsPerWindow: null,
      }),
    ).toBe('invalid_input');
    await call('tasks', 'cancel', 'no-such-job');
    const sweep = { kind: 'sweep', model: 'demo:q8_0', workload: 'chat-short', repeats: 1, requestsPerWindow: 2 };
    expect(await call('experiments', 'validate', { ...sweep, vary: { field: 'batchSize', values: ['512', '1024'] } })).toEqual({
      problem: null,
    });
    // A value the launch would refuse (the default micro-batch is 512) is refused before the job starts, naming the value.
    expect(await call('experiments', 'validate', { ...sweep, vary: { field: 'batchSize', values: ['256', '512'] } })).toEqual({
      problem: expect.stringMatching(/the sweep's batchSize=256: .*ubatchSize \(512\) cannot exceed batchSize \(256\)/s),
    });
    expect(await call('experiments', 'validate', { ...sweep, vary: { field: 'batchSize', values: ['256', 'many'] } })).toEqual({
      problem: expect.stringMatching(/batchSize/),
    });
    expect(await call('experiments', 'validate', { ...sweep, kind: 'quant', quants: ['f16'] })).toEqual({
      problem: expect.stringMatching(/quants needs two or more/),
    });

    expect(events.some((event) => event.name === 'server.state')).toBe(true);
    expect(events.some((event) => event.name === 'server.log' && (event.payload as AppEvents['server.log']).lines.length > 0)).toBe(true);
    const declared = Object.entries(SERVICE_CONTRACT).flatMap(([service, methods]) =>
      Object.keys(methods).map((method) => `${service}.${method}`),
    );
    expect([...called].sort()).toEqual(declared.sort());
    expect(fs.existsSync(dbPath)).toBe(true);
  }, 180_000);
});
