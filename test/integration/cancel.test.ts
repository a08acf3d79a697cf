import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ToolTaskProgress } from '../../src/shared/contract';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';
import { createServices, type ServiceContainer } from '../../src/main/services';
import { shellAccess } from '../../src/main/services/access';
import { taskEnd } from '../support/tasks';
import { useTempDirs } from '../support/temp';

/** Long operations stop when asked, through the same dispatcher calls the UI makes. */
const tempDir = useTempDirs();
const containers: ServiceContainer[] = [];
afterEach(async () => {
  for (const container of containers.splice(0)) await container.dispose();
});

async function open(): Promise<{
  container: ServiceContainer;
  call: (service: string, method: string, ...args: unknown[]) => Promise<unknown>;
}> {
  const container = await createServices({ dbPath: path.join(tempDir(), 'cancel.db'), access: shellAccess() });
  containers.push(container);
  const dispatcher = new RpcDispatcher(container.services);
  return {
    container,
    call: async (service, method, ...args) => {
      const reply = await dispatcher.dispatch({ service, method, args });
      if (!reply.ok) throw new Error(reply.error.message);
      return reply.result;
    },
  };
}

describe('cancelling long operations', () => {
  it('tasks.cancel stops a build: it ends cancelled, installs nothing, and leaves no build process', async () => {
    // A cache of its own: the build starts from the source bundle and the real cache is never touched.
    const cache = tempDir();
    const saved = process.env.INFERLAB_CACHE_DIR;
    process.env.INFERLAB_CACHE_DIR = cache;
    try {
      const { container, call } = await open();
      const events: ToolTaskProgress[] = [];
      const finished = taskEnd(container.events, 'setup', {
        onProgress: (progress) => {
          events.push(progress);
          if (progress.message.startsWith('[1/4]')) void call('tasks', 'cancel', progress.jobId);
        },
      });
      await call('engine', 'setup', { backend: 'cpu', force: true });
      const last = await finished;
      expect(last).toMatchObject({ kind: 'setup', phase: 'cancelled', message: 'cancelled', error: null });
      expect(events.some((event) => event.message.startsWith('[1/4]'))).toBe(true);
      expect(events.some((event) => event.message.startsWith('[3/4]'))).toBe(false);
      const installed = fs.readdirSync(path.join(cache, 'engine'), { recursive: true }).map(String);
      expect(installed.filter((file) => file.endsWith('build.json') || /(^|\/)bin\/llama-server$/.test(file))).toEqual([]);
      // Stopped within the source step, which leaves no half-made folder to be taken for the source later.
      expect(installed.filter((file) => /\.(partial|staging)(\/|$)/.test(file) || file.endsWith('src/CMakeLists.txt'))).toEqual([]);
      const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
      expect(ps.split('\n').filter((line) => line.includes(cache))).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.INFERLAB_CACHE_DIR;
      else process.env.INFERLAB_CACHE_DIR = saved;
    }
  }, 180_000);

  it('tasks.cancel stops llama-quantize mid-file and leaves no partial file', async () => {
    const { container, call } = await open();
    const dir = tempDir();
    const source = path.join(dir, 'model-f16.gguf');
    fs.copyFileSync(await resolveModelRef('demo:f16'), source);
    const events: ToolTaskProgress[] = [];
    let cancelled = false;
    const finished = taskEnd(container.events, 'quantize', {
      onProgress: (progress) => {
        events.push(progress);
        if (progress.phase === 'running' && !cancelled) {
          cancelled = true;
          void call('tasks', 'cancel', progress.jobId);
        }
      },
    });
    await call('models', 'quantize', source, ['Q4_0']);
    const last = await finished;
    expect(last).toMatchObject({ phase: 'cancelled', error: null });
    expect(fs.readdirSync(dir)).toEqual(['model-f16.gguf']);
    expect(events.filter((event) => event.phase === 'running').length).toBeGreaterThan(0);
  });

  it('tasks.cancel stops a run with its finished requests kept, and runs.remove deletes it with them', async () => {
    const { container, call } = await open();
    let cancelled = false;
    const done = taskEnd(container.events, 'run', {
      onProgress: (progress) => {
        if (progress.done >= 2 && !cancelled) {
          cancelled = true;
          void call('tasks', 'cancel', progress.jobId);
        }
      },
    });
    await call('runs', 'start', {
      workload: 'decode-heavy',
      model: 'demo:q4_k_m',
      endpoint: null,
      profileName: 'default',
      concurrency: 1,
      rate: null,
      requests: 200,
      durationS: null,
      warmup: 0,
      private: false,
      force: true,
    });
    const state = await done;
    // Cancelled is the task's own outcome, with no error, and the finished requests' summary kept.
    expect(state).toMatchObject({ phase: 'cancelled', error: null });
    expect(state.detail.summary!.status).toBe('interrupted');
    const stored = state.detail.summary!.requests.attempted;
    expect(stored).toBeGreaterThanOrEqual(2);
    expect(stored).toBeLessThan(200);
    const detail = (await call('runs', 'get', state.detail.runId)) as { item: { requests: number } };
    expect(detail.item.requests).toBe(stored);
    expect(await call('runs', 'remove', state.detail.runId)).toBe(true);
    expect((await call('runs', 'list')) as unknown[]).toEqual([]);
    await expect(call('runs', 'get', state.detail.runId)).rejects.toThrow(/No run/);
  }, 120_000);

  it('tasks.cancel stops an experiment, reports it cancelled and stores it interrupted', async () => {
    const { container, call } = await open();
    let cancelled = false;
    const done = taskEnd(container.events, 'experiment', {
      onProgress: (progress) => {
        // Once a window is under way, ask it to stop.
        if (progress.phase === 'running' && /window|cold start/i.test(progress.message) && !cancelled) {
          cancelled = true;
          void call('tasks', 'cancel', progress.jobId);
        }
      },
    });
    await call('experiments', 'start', {
      kind: 'warmcold',
      model: 'demo:q4_k_m',
      workload: 'prefix-share',
      repeats: 3,
      requestsPerWindow: 8,
    });
    const state = await done;
    expect(cancelled).toBe(true);
    expect(state).toMatchObject({ phase: 'cancelled', error: null });
    const [stored] = (await call('experiments', 'list')) as { status: string }[];
    expect(stored!.status).toBe('interrupted');
    // Every server the experiment started has been stopped.
    const servers = (await call('servers', 'list')) as { state: string; pid: number | null }[];
    expect(servers.length).toBeGreaterThan(0);
    expect(servers.filter((server) => server.state !== 'stopped' || server.pid !== null)).toEqual([]);
  }, 180_000);
});
