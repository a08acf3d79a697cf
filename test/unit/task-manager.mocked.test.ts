import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServices, type ServiceContainer } from '../../src/main/services';
import { shellAccess } from '../../src/main/services/access';
import { throwIfCancelled } from '../../src/main/core/errors';
import type { TaskKind, TaskProgress } from '../../src/shared/contract';
import { SERVICE_CONTRACT } from '../../src/shared/contract/services';
import { taskEnd } from '../support/tasks';
import { demoRunSpec } from '../support/specs';
import { useTempDirs } from '../support/temp';
import type * as TasksModule from '../../src/main/services/tasks';

/**
 * One task manager, in fact: the composition root builds one `TaskRunner`, every service's long
 * operation runs on it, and `tasks.list` and `tasks.cancel` reach each of them. The work itself
 * (a run's requests, a setup's build) is stood in for by work that waits for its cancel, so no
 * server starts and nothing is built.
 */
const runners = vi.hoisted(() => ({ built: 0 }));

vi.mock('../../src/main/services/tasks', async (importOriginal) => {
  const original = await importOriginal<typeof TasksModule>();
  class CountedRunner extends original.TaskRunner {
    constructor(...args: ConstructorParameters<typeof original.TaskRunner>) {
      super(...args);
      runners.built += 1;
    }
  }
  return { ...original, TaskRunner: CountedRunner };
});

/** Work that goes on until it is cancelled, as a run or a build does between its steps. */
async function untilCancelled(signal: AbortSignal | undefined): Promise<never> {
  await new Promise((resolve) => signal?.addEventListener('abort', resolve, { once: true }));
  throwIfCancelled(signal);
  throw new Error('unreachable: the signal was aborted');
}

vi.mock('../../src/main/runner/run-workload', () => ({
  runWorkload: (options: { signal?: AbortSignal }) => untilCancelled(options.signal),
}));
vi.mock('../../src/main/setup/setup', () => ({
  runSetup: (options: { signal?: AbortSignal }) => untilCancelled(options.signal),
}));

const tempDir = useTempDirs();
const containers: ServiceContainer[] = [];
afterEach(async () => {
  for (const container of containers.splice(0)) await container.dispose();
}, 60_000);

async function services(): Promise<ServiceContainer> {
  const container = await createServices({
    dbPath: path.join(tempDir(), 'tasks.db'),
    access: shellAccess(),
    idleTelemetry: false,
  });
  containers.push(container);
  return container;
}

/** The last report of the task `jobId`: how it ended. */
function reportOf(container: ServiceContainer, kind: TaskKind, jobId: string): Promise<TaskProgress> {
  return taskEnd(container.events, kind, { jobId: () => jobId });
}

describe('one task manager', () => {
  it('is built once by the composition root, however many services start tasks', { timeout: 60_000 }, async () => {
    const before = runners.built;
    const container = await services();
    await container.services.runs.list(10);
    // Building the services that start tasks builds no runner of their own.
    await container.services.runs.start(demoRunSpec({ model: null, endpoint: 'http://127.0.0.1:9/v1' }));
    await container.services.engine.setup({ backend: 'cpu' });
    await container.services.models.cached('hf:nobody/nothing', ['Q4_K_M']).catch(() => null);
    await container.experiments.list();
    expect(runners.built - before).toBe(1);
  });

  it('lists a run and an engine setup as tasks of one list, and cancels either by its job id', { timeout: 60_000 }, async () => {
    const container = await services();
    const { tasks } = container.services;
    expect(await tasks.list()).toEqual([]);
    const run = await container.services.runs.start(demoRunSpec({ model: null, endpoint: 'http://127.0.0.1:9/v1' }));
    const setup = await container.services.engine.setup({ backend: 'cpu' });
    const listed = await tasks.list();
    expect(listed.map(({ jobId, kind, endedAt }) => ({ jobId, kind, endedAt }))).toEqual([
      { jobId: run.jobId, kind: 'run', endedAt: null },
      { jobId: setup.jobId, kind: 'setup', endedAt: null },
    ]);
    // A list item says where the task stands, without the kind's detail (a run's summary travels on task.progress).
    for (const item of listed) {
      expect(item).not.toHaveProperty('detail');
      expect(['starting', 'running']).toContain(item.phase);
    }

    const setupEnd = reportOf(container, 'setup', setup.jobId);
    await tasks.cancel(setup.jobId);
    expect(await setupEnd).toMatchObject({ phase: 'cancelled', error: null });
    const runEnd = reportOf(container, 'run', run.jobId);
    await tasks.cancel(run.jobId);
    expect(await runEnd).toMatchObject({ phase: 'cancelled', error: null });

    // Ended tasks stay listed, so a face that connects late sees how they ended.
    await vi.waitFor(async () =>
      expect((await tasks.list()).map(({ jobId, phase, endedAt }) => ({ jobId, phase, ended: endedAt !== null }))).toEqual([
        { jobId: setup.jobId, phase: 'cancelled', ended: true },
        { jobId: run.jobId, phase: 'cancelled', ended: true },
      ]),
    );
    // An id no task has is ignored.
    await expect(tasks.cancel('no-such-job')).resolves.toBeUndefined();
  });

  it('declares one cancel in the contract: the tasks service’s, for every kind', () => {
    const cancels = Object.entries(SERVICE_CONTRACT).flatMap(([service, methods]) =>
      Object.keys(methods)
        .filter((method) => method === 'cancel')
        .map((method) => `${service}.${method}`),
    );
    expect(cancels).toEqual(['tasks.cancel']);
  });

  it('cancels every task when the services are disposed, and waits for each to end', { timeout: 60_000 }, async () => {
    const container = await services();
    const run = await container.services.runs.start(demoRunSpec({ model: null, endpoint: 'http://127.0.0.1:9/v1' }));
    const setup = await container.services.engine.setup({ backend: 'cpu' });
    const ends = Promise.all([reportOf(container, 'run', run.jobId), reportOf(container, 'setup', setup.jobId)]);
    await container.dispose();
    containers.splice(containers.indexOf(container), 1);
    expect((await ends).map((end) => end.phase)).toEqual(['cancelled', 'cancelled']);
  });
});
