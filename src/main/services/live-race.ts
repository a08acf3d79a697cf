import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LiveRaceRequest, RaceTaskProgress, StartRunSpec } from '../../shared/contract';
import type { RunSummary } from '../../shared/contract/runs';
import { ErrorCode } from '../../shared/errors';
import type { Race, RaceLane } from '../../shared/race';
import { AppError } from '../core/errors';
import type { WorkloadItemDef } from '../workload/workload-types';
import { resolveModelWithin, type ServiceAccess } from './access';
import { racedItem } from './race-item';
import type { RunHooks } from './run-task';
import type { LaunchedTask, TaskRunner } from './tasks';

/** The one-item workload every lane is given, written where only this user can read it. */
function raceWorkloadFile(request: LiveRaceRequest, item: WorkloadItemDef): { file: string; dispose: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-race-'));
  const file = path.join(dir, 'race.yaml');
  const workload = {
    name: 'race',
    description: 'The prompt of one race, the same for every lane.',
    defaults: { max_tokens: request.maxTokens, temperature: 0, seed: 7 },
    // The warm-up request loads the weights and the first-token path with another prompt, so the raced
    // prompt meets no cached prefix and every lane's TTFT includes its prefill.
    groups: [
      {
        name: 'race',
        items: [{ id: 'warm-up', messages: [{ role: 'user', content: 'Say hello in five words.' }] }, item],
      },
    ],
  };
  // JSON is YAML: the prompt needs no escaping of its own.
  fs.writeFileSync(file, JSON.stringify(workload), { mode: 0o600 });
  return { file, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** The face's access, admitting besides its own roots the one workload file the race wrote itself. */
function admittingRaceWorkload(access: ServiceAccess, file: string): ServiceAccess {
  return {
    ...access,
    paths: {
      ...access.paths,
      check: async (candidate, kind) => (kind === 'workload' && candidate === file ? file : access.paths.check(candidate, kind)),
    },
  };
}

/**
 * Where lanes that run together meet after their warm-up: each waits until all have arrived, so
 * every raced prompt is sent at one instant. A lane that can no longer arrive (its server did not
 * start, it was cancelled) releases the others with its error instead of leaving them waiting.
 */
export class StartLine {
  private arrived = 0;
  private readonly gate: Promise<void>;
  private open!: () => void;
  private refuse!: (error: Error) => void;

  constructor(private readonly lanes: number) {
    this.gate = new Promise<void>((resolve, reject) => {
      this.open = resolve;
      this.refuse = reject;
    });
    // Abandoned with no lane waiting: not an unhandled rejection.
    this.gate.catch(() => undefined);
  }

  arrive(): Promise<void> {
    this.arrived += 1;
    if (this.arrived === this.lanes) this.open();
    return this.gate;
  }

  abandon(reason: Error): void {
    this.refuse(reason);
  }
}

/** What measuring a race needs from the runs service. */
export interface RaceDeps {
  access: ServiceAccess;
  /** One run, awaited, checked against `access` (the runs service's own, so each lane is checked and stored as any run). */
  run: (spec: StartRunSpec, hooks: RunHooks, access: ServiceAccess) => Promise<RunSummary>;
  /** Stored runs as lanes (their measured request each). */
  race: (runIds: string[]) => Race;
}

export interface RaceProgress {
  signal: AbortSignal;
  onStatus: (line: string) => void;
  onLaneMeasured: () => void;
}

const APART_NOTE =
  'Run one after another, each on its own warmed server, then played together at the pace each lane’s tokens arrived: no lane slowed another.';
const TOGETHER_NOTE =
  'Run together: every lane’s prompt was sent at one instant, each to its own server on this machine, so the lanes competed for it (GPU, memory bandwidth, CPU) and each is slower than it would be alone.';

function laneSpec(request: LiveRaceRequest, index: number, workload: string): StartRunSpec {
  const lane = request.lanes[index]!;
  return {
    workload,
    model: lane.model,
    endpoint: null,
    profileName: lane.profileName ?? 'default',
    settings: lane.settings ?? [],
    // Lanes that run together each start a server beside the others: that is the point of the mode.
    force: request.together,
    concurrency: 1,
    rate: null,
    requests: 1,
    durationS: null,
    warmup: 1,
    private: false,
  };
}

/** A lane by what it raced: its model, any profile and settings that set it apart, and its stored request. */
function laneLabel(request: LiveRaceRequest, index: number, lane: RaceLane): string {
  const { model, profileName, settings = [] } = request.lanes[index]!;
  const apart = [...(profileName && profileName !== 'default' ? [`profile ${profileName}`] : []), ...settings];
  return `${model}${apart.length > 0 ? ` (${apart.join(', ')})` : ''} · ${lane.runId.slice(0, 8)}:${lane.seq}`;
}

function laneOutcome(summary: RunSummary, index: number, model: string): string {
  if (summary.status !== 'completed')
    throw new AppError(ErrorCode.RequestFailed, `lane ${index + 1} (${model}) ended ${summary.status}: nothing to race`);
  return summary.run_id;
}

/**
 * Every lane at once, their prompts released together from one start line. The first lane to fail
 * stops the rest, and the race ends with its error once every lane has ended: none outlives it.
 */
async function lanesTogether(request: LiveRaceRequest, workload: string, deps: RaceDeps, progress: RaceProgress): Promise<string[]> {
  const startLine = new StartLine(request.lanes.length);
  const stopAll = new AbortController();
  const onCancel = () => stopAll.abort(progress.signal.reason);
  progress.signal.addEventListener('abort', onCancel, { once: true });
  progress.onStatus(`${request.lanes.length} lanes together: each starts its server and warms it, then all are sent the prompt at once`);
  let firstFailure: Error | null = null;
  try {
    const outcomes = await Promise.allSettled(
      request.lanes.map(async (lane, index) => {
        try {
          const summary = await deps.run(
            laneSpec(request, index, workload),
            { signal: stopAll.signal, atStartLine: () => startLine.arrive() },
            deps.access,
          );
          progress.onLaneMeasured();
          return laneOutcome(summary, index, lane.model);
        } catch (error) {
          const reason = error instanceof Error ? error : new Error(String(error));
          firstFailure ??= reason;
          startLine.abandon(new AppError(ErrorCode.RequestFailed, `lane ${index + 1} (${lane.model}) failed: ${reason.message}`));
          stopAll.abort(reason);
          throw reason;
        }
      }),
    );
    if (firstFailure) throw firstFailure;
    return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<string>).value);
  } finally {
    progress.signal.removeEventListener('abort', onCancel);
  }
}

async function lanesApart(request: LiveRaceRequest, workload: string, deps: RaceDeps, progress: RaceProgress): Promise<string[]> {
  const runIds: string[] = [];
  for (const [index, lane] of request.lanes.entries()) {
    progress.onStatus(`lane ${index + 1}/${request.lanes.length}: ${lane.model}, one request after one to warm the server`);
    const summary = await deps.run(laneSpec(request, index, workload), { signal: progress.signal }, deps.access);
    runIds.push(laneOutcome(summary, index, lane.model));
    progress.onLaneMeasured();
  }
  return runIds;
}

/**
 * Measures a race now: each lane a run of one warm-up request and the prompt on its own server,
 * stored as any run, either one after another (no lane slows another) or released together from
 * one start line (they compete, which is what that mode shows). The race is their stored requests.
 */
export async function measureLiveRace(
  request: LiveRaceRequest,
  deps: RaceDeps,
  progress: RaceProgress,
  /** The item as checkLiveRace found it, so a generated item is not generated again; found here where absent. */
  item?: WorkloadItemDef,
): Promise<Race> {
  const workload = raceWorkloadFile(request, item ?? (await racedItem(request, deps.access)));
  try {
    const laneDeps = { ...deps, access: admittingRaceWorkload(deps.access, workload.file) };
    const runIds = await (request.together ? lanesTogether : lanesApart)(request, workload.file, laneDeps, progress);
    const race = deps.race(runIds);
    return {
      lanes: race.lanes.map((lane, index) => ({ ...lane, label: laneLabel(request, index, lane) })),
      note: request.together ? TOGETHER_NOTE : APART_NOTE,
    };
  } finally {
    workload.dispose();
  }
}

export interface RaceHooks {
  onStatus?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Refuses, before any lane runs, a blank prompt or a bad item, and a lane whose model this face may not reach or that
 * does not exist; returns the item every lane is given.
 */
async function checkLiveRace(request: LiveRaceRequest, access: ServiceAccess): Promise<WorkloadItemDef> {
  const item = await racedItem(request, access);
  // One after another, so the first lane that cannot run is the one named.
  for (const [index, lane] of request.lanes.entries())
    await resolveModelWithin(access, lane.model).catch((error: Error & { code?: string }) => {
      throw new AppError(error instanceof AppError ? error.code : ErrorCode.InvalidInput, `lane ${index + 1}: ${error.message}`);
    });
  return item;
}

/** A live race as a task (kind race): `done` counts the lanes measured, and the race arrives with its end. */
export async function launchLiveRace(
  tasks: TaskRunner,
  request: LiveRaceRequest,
  hooks: RaceHooks,
  deps: RaceDeps,
): Promise<LaunchedTask<Race>> {
  const item = await checkLiveRace(request, deps.access);
  return tasks.launch<RaceTaskProgress, Race>({
    kind: 'race',
    detail: { race: null },
    total: request.lanes.length,
    cancelledMessage: 'cancelled: the lanes measured before are stored as runs',
    work: (task) =>
      measureLiveRace(
        request,
        deps,
        {
          signal: task.signal,
          onStatus: (line) => {
            hooks.onStatus?.(line);
            task.running(line);
          },
          onLaneMeasured: () => {
            task.progress.done += 1;
            task.send(true);
          },
        },
        item,
      ),
    settle(progress, race) {
      progress.detail.race = race;
      progress.message = `race measured: ${race.lanes.length} lanes`;
    },
  });
}
