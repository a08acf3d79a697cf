import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { LiveRaceRequest, StartRunSpec } from '../../src/shared/contract';
import type { RunSummary } from '../../src/shared/contract/runs';
import type { Race } from '../../src/shared/race';
import type { ServiceAccess } from '../../src/main/services/access';
import { measureLiveRace, StartLine, type RaceDeps } from '../../src/main/services/live-race';
import type { RunHooks } from '../../src/main/services/run-task';

// The lanes' runs are stand-ins here (a warm-up that takes a set time, then the measured request):
// what is under test is how the race orders and releases them. The real runs are in
// test/integration/race.test.ts and the Race view's UI test.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** An access that refuses every path, as a face whose roots hold none of the race's own files. */
const refusingAccess = {
  face: 'rpc',
  paths: {
    check: async (candidate: string) => {
      throw new Error(`outside the roots: ${candidate}`);
    },
  },
  endpointHeaders: () => ({}),
  checkEndpoint: () => undefined,
} as unknown as ServiceAccess;

const request = (together: boolean, lanes = 2): LiveRaceRequest => ({
  lanes: Array.from({ length: lanes }, (_, index) => ({ model: `demo:lane${index}` })),
  prompt: 'Why is the sky blue?',
  maxTokens: 16,
  together,
});

interface LaneLog {
  model: string;
  began: number;
  measuredAt: number | null;
  ended: number | null;
  workloadText: string;
  aborted: boolean;
}

/** Lanes whose warm-up takes `warmupMs[i]`; lane `failing` fails at the end of its warm-up. */
function standInRuns(warmupMs: number[], failing: number | null = null) {
  const logs: LaneLog[] = [];
  const origin = performance.now();
  const deps: RaceDeps = {
    access: refusingAccess,
    race: (runIds): Race => ({
      lanes: runIds.map((runId) => ({ runId, seq: 1, label: 'stored' }) as unknown as Race['lanes'][number]),
      note: 'stored',
    }),
    run: async (spec: StartRunSpec, hooks: RunHooks, access: ServiceAccess) => {
      const index = Number(spec.model!.replace('demo:lane', ''));
      // The service checks the workload against the face's roots: the race's own file must pass, nothing else.
      const workload = await access.paths.check(spec.workload, 'workload');
      await expect(access.paths.check('/etc/passwd', 'workload')).rejects.toThrow(/outside the roots/);
      const log: LaneLog = {
        model: spec.model!,
        began: performance.now() - origin,
        measuredAt: null,
        ended: null,
        workloadText: fs.readFileSync(workload, 'utf8'),
        aborted: false,
      };
      logs.push(log);
      hooks.signal?.addEventListener('abort', () => (log.aborted = true));
      try {
        await sleep(warmupMs[index]!);
        if (index === failing) throw new Error('the server did not start');
        await hooks.atStartLine?.();
        log.measuredAt = performance.now() - origin;
        await sleep(5);
        return { status: 'completed', run_id: `run-${index}` } as RunSummary;
      } catch (error) {
        // A stopped run takes a moment to store what it had and stop its server.
        await sleep(30);
        throw error;
      } finally {
        log.ended = performance.now() - origin;
      }
    },
  };
  return { deps, logs };
}

const progress = () => {
  const lines: string[] = [];
  let measured = 0;
  return {
    lines,
    measured: () => measured,
    hooks: { signal: new AbortController().signal, onStatus: (line: string) => lines.push(line), onLaneMeasured: () => (measured += 1) },
  };
};

describe('a live race', () => {
  it('together: every lane waits at the start line until the slowest has warmed, then all are sent at one instant', async () => {
    const { deps, logs } = standInRuns([5, 150, 60]);
    const seen = progress();
    const race = await measureLiveRace(request(true, 3), deps, seen.hooks);
    expect(race.note).toMatch(/^Run together: every lane’s prompt was sent at one instant/);
    expect(race.lanes.map((lane) => lane.runId)).toEqual(['run-0', 'run-1', 'run-2']);
    expect(seen.measured()).toBe(3);
    const released = logs.map((log) => log.measuredAt!);
    // All began together, and none was sent before the slowest warm-up (150 ms) was over.
    expect(Math.max(...logs.map((log) => log.began))).toBeLessThan(50);
    expect(Math.min(...released)).toBeGreaterThanOrEqual(145);
    expect(Math.max(...released) - Math.min(...released)).toBeLessThan(10);
    // Every lane is given the same prompt with the answer cap, after a warm-up on another prompt.
    for (const log of logs) {
      const workload = JSON.parse(log.workloadText);
      expect(workload.defaults.max_tokens).toBe(16);
      expect(workload.groups[0].items.map((item: { messages: { content: string }[] }) => item.messages[0]!.content)).toEqual([
        'Say hello in five words.',
        'Why is the sky blue?',
      ]);
    }
  });

  it('apart: each lane runs after the one before has ended, with no start line', async () => {
    const { deps, logs } = standInRuns([20, 20]);
    const seen = progress();
    const race = await measureLiveRace(request(false), deps, seen.hooks);
    expect(race.note).toMatch(/^Run one after another/);
    expect(logs[1]!.began).toBeGreaterThanOrEqual(logs[0]!.ended!);
    // Each lane is named by what it raced: its model, and the profile and settings that set it apart.
    expect(race.lanes.map((lane) => lane.label)).toEqual(['demo:lane0 · run-0:1', 'demo:lane1 · run-1:1']);
    const tuned = await measureLiveRace(
      {
        ...request(false),
        lanes: [{ model: 'demo:lane0' }, { model: 'demo:lane1', profileName: 'long', settings: ['loraAdapter=demo:lora'] }],
      },
      deps,
      progress().hooks,
    );
    expect(tuned.lanes[1]!.label).toBe('demo:lane1 (profile long, loraAdapter=demo:lora) · run-1:1');
    expect(seen.lines).toEqual([
      'lane 1/2: demo:lane0, one request after one to warm the server',
      'lane 2/2: demo:lane1, one request after one to warm the server',
    ]);
  });

  it('together: a lane that fails before the line releases the others with its error and stops them, and the race ends after every lane', async () => {
    const { deps, logs } = standInRuns([5, 40], 1);
    const seen = progress();
    const outcome = measureLiveRace(request(true), deps, seen.hooks);
    // Without the release, lane 1 would wait at the line for ever and this would time out.
    await expect(outcome).rejects.toThrow(/the server did not start|lane 2 \(demo:lane1\) failed/);
    expect(logs[0]!.measuredAt).toBeNull();
    expect(logs[0]!.aborted).toBe(true);
    // The race ends once every lane has: none is left running behind it.
    expect(logs.every((log) => log.ended !== null)).toBe(true);
    expect(seen.measured()).toBe(0);
    const workload = JSON.parse(logs[0]!.workloadText);
    expect(workload.name).toBe('race');
  });

  it('refuses a blank prompt before any lane runs', async () => {
    const { deps, logs } = standInRuns([1, 1]);
    await expect(measureLiveRace({ ...request(false), prompt: '  \n' }, deps, progress().hooks)).rejects.toThrow(/not blank/);
    expect(logs).toEqual([]);
  });

  it('the start line opens only when the last lane arrives, and an abandoned line rejects every waiter', async () => {
    const line = new StartLine(2);
    let opened = false;
    const first = line.arrive().then(() => (opened = true));
    await sleep(5);
    expect(opened).toBe(false);
    await line.arrive();
    await first;
    expect(opened).toBe(true);

    const broken = new StartLine(3);
    const waiting = broken.arrive();
    broken.abandon(new Error('lane 3 failed'));
    await expect(waiting).rejects.toThrow('lane 3 failed');
    await expect(broken.arrive()).rejects.toThrow('lane 3 failed');
  });
});
