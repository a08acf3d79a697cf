import type { EngineInfo } from '../../shared/contract/engine';
import type { ExperimentResult } from '../../shared/contract/experiments';
import type { ServerProfile } from '../../shared/contract/server';
import { runWorkload, type RunRequest, type RunResult } from '../runner/run-workload';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import type { WorkloadDef } from '../workload/workload-types';
import type { ExperimentStore } from '../store/experiment-store';
import type { WindowCooldown } from './window-cooldown';

/** What every experiment on one model needs: where runs go, how servers start, what runs. */
export interface SingleModelExperimentInputs {
  runs: RunStore;
  experiments: ExperimentStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  model: { ref: string; path: string };
  workload: { def: WorkloadDef; file: string };
  profile: ServerProfile;
}

/** How every experiment window's run is made: generous timeouts, stored text, no reference (and the idle baseline's floor, BASELINE_INTERVALS of the GPU interval). */
const WINDOW_RUN_DEFAULTS = {
  timeouts: { firstTokenMs: 120_000, totalMs: 600_000 },
  private: false,
  referenceRunId: null,
} as const;

/** What a window's run takes from its experiment: where runs go, how servers start, what runs, when to stop. */
export type WindowInputs = Pick<SingleModelExperimentInputs, 'runs' | 'experiments' | 'servers' | 'engine' | 'workload'> & {
  signal?: AbortSignal;
};

/** Where a window's run belongs: its experiment, its condition and which window of that condition it is. */
export interface WindowSlot {
  experimentId: string;
  condition: string;
  window: number;
}

/** What differs between the windows of experiments: where they run, at what load, how many requests, judged how. */
export type WindowRequest = Pick<RunRequest, 'target' | 'load' | 'stop' | 'warmup' | 'slo' | 'extraBody'>;

/** The usual window: closed loop at the experiment's concurrency, its requests per window, no warm-up. */
export function closedWindowRequest(
  target: WindowRequest['target'],
  options: { concurrency: number; requestsPerWindow: number | null },
  slo: WindowRequest['slo'],
): WindowRequest {
  return {
    target,
    load: { mode: 'closed', concurrency: options.concurrency },
    stop: { requests: options.requestsPerWindow, durationMs: null },
    warmup: 0,
    slo,
  };
}

/**
 * One window of an experiment: a run made with the window defaults and recorded under its
 * condition, so that the experiment's result and its stored runs cannot disagree.
 */
export async function runWindow(inputs: WindowInputs, slot: WindowSlot, request: WindowRequest): Promise<RunResult> {
  const result = await runWorkload({
    request: { workload: inputs.workload, ...request, ...WINDOW_RUN_DEFAULTS },
    store: inputs.runs,
    servers: inputs.servers,
    engine: inputs.engine,
    signal: inputs.signal,
  });
  inputs.experiments.addRun(slot.experimentId, result.summary.run_id, slot.condition, slot.window);
  return result;
}

/**
 * Runs an experiment and records how it ended: its result when it completes; when it throws,
 * interrupted if it was cancelled and failed otherwise, so no experiment stays running. A
 * cooldown's waits are added to the result, so how each window started is on record.
 */
export async function settleExperiment(
  inputs: { experiments: ExperimentStore; signal?: AbortSignal; cooldown?: WindowCooldown | null },
  experimentId: string,
  body: () => Promise<ExperimentResult>,
): Promise<ExperimentResult> {
  try {
    const measured = await body();
    const result = inputs.cooldown ? { ...measured, cooldown_waits: [...inputs.cooldown.waits] } : measured;
    inputs.experiments.finish(experimentId, 'completed', result);
    return result;
  } catch (error) {
    inputs.experiments.finish(experimentId, inputs.signal?.aborted ? 'interrupted' : 'failed', null);
    throw error;
  }
}
