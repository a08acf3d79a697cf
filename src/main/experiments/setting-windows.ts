import type { ExperimentStopping } from '../../shared/contract/experiments';
import type { SloSpec } from '../../shared/contract/runs';
import type { ServerProfile } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError, throwIfCancelled } from '../core/errors';
import { runWindow, type SingleModelExperimentInputs } from './experiment-inputs';
import { runWindowRounds, type OpenVerdicts } from './window-rounds';
import type { WindowCooldown } from './window-cooldown';
import { workloadServes } from '../workload/workload-serves';

/*
 * Windows of a varied server setting at several load levels, each a fresh server: the sweep's
 * protocol, and speculative decoding's (each draft limit a setting).
 */

export interface WindowGoodput {
  requestsPerS: number | null;
  /** Good share (succeeded, accepted, within the SLOs), and its two parts. */
  fraction: number | null;
  withinSlo: number | null;
  accepted: number | null;
  measured: number;
}

/** What one window of one condition gave: the goodput figures its run reported. */
export interface WindowGoodputEntry {
  name: string;
  value: string;
  concurrency: number;
  runIds: string[];
  goodput: WindowGoodput[];
}

/**
 * Each (setting, window) gets a fresh server that then runs every load level (in an order
 * rotated per window); settings run in rotated order per window. Fills each condition's run ids
 * and goodput in place; looks at the verdicts after the rounds the sequential design names where
 * `openAfter` is given (window-rounds.ts), and says how many windows ran and why.
 */
export async function runSettingWindows(
  options: SingleModelExperimentInputs & {
    requestsPerCondition: number | null;
    slo: SloSpec | null;
    cooldown?: WindowCooldown | null;
    signal?: AbortSignal;
    onStatus?: (line: string) => void;
  },
  plan: {
    experimentId: string;
    /** Each value's server profile, and its own workload where the value is one of the workload's. */
    settings: { value: string; profile: ServerProfile; workload?: SingleModelExperimentInputs['workload'] }[];
    concurrencies: number[];
    repeats: number;
    conditions: WindowGoodputEntry[];
    nameOf: (value: string, concurrency: number) => string;
    /** The setting in words, for errors. */
    describe: (value: string) => string;
    /** The verdicts the answer needs that are still open after a look; without it, every window runs. */
    openAfter?: OpenVerdicts;
  },
): Promise<ExperimentStopping> {
  const byName = new Map(plan.conditions.map((condition) => [condition.name, condition]));
  const runOne = async (window: number, setting: (typeof plan.settings)[number]) => {
    const workload = setting.workload ?? options.workload;
    const server = await options.servers.prepare({
      modelRef: options.model.ref,
      profile: setting.profile,
      serves: workloadServes(workload.def),
    });
    try {
      const ready = await server.start();
      if (ready.state !== 'ready')
        throw new AppError(ErrorCode.ServerStartFailed, `${plan.describe(setting.value)}: ${ready.fault?.message}`);
      const levels = plan.concurrencies.map((_, i) => plan.concurrencies[(i + window) % plan.concurrencies.length]!);
      for (const concurrency of levels) {
        throwIfCancelled(options.signal);
        const entry = byName.get(plan.nameOf(setting.value, concurrency))!;
        options.onStatus?.(`window ${window + 1}/${plan.repeats}: ${entry.name}`);
        await options.cooldown?.beforeWindow(options.onStatus);
        const { summary } = await runWindow(
          { ...options, workload },
          { experimentId: plan.experimentId, condition: entry.name, window },
          {
            target: { kind: 'server', server, modelRef: options.model.ref, modelPath: options.model.path },
            load: { mode: 'closed', concurrency },
            stop: { requests: options.requestsPerCondition, durationMs: null },
            warmup: Math.min(concurrency, 4),
            slo: options.slo,
          },
        );
        entry.runIds.push(summary.run_id);
        entry.goodput.push({
          requestsPerS: summary.goodput.requests_per_s,
          fraction: summary.goodput.fraction,
          withinSlo: summary.goodput.within_slo_fraction ?? null,
          accepted: summary.accepted_rate,
          measured: summary.requests.attempted,
        });
      }
    } finally {
      await server.stop();
    }
  };
  // Without verdicts to look at, every window runs (the fixed design).
  const openAfter = plan.openAfter;
  return runWindowRounds(plan.settings, { repeats: plan.repeats, fixed: !openAfter }, runOne, openAfter ?? (() => []), options.onStatus);
}
