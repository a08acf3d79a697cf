import type { QuantConstraints } from '../../shared/contract/experiments';
import type { RunSummary } from '../../shared/contract/runs';
import type { ColdStart, EffectiveConfig, ServerProfile } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError, throwIfCancelled } from '../core/errors';
import { applySettings, assertValidProfile } from '../engines/llamacpp/profile-rules';
import { summarizeCondition, summaryVerdicts, type VerdictOptions } from './condition-summary';
import { closedWindowRequest, runWindow, type SingleModelExperimentInputs } from './experiment-inputs';
import { openSpeedVerdicts } from './recommend';
import { openName, runWindowRounds } from './window-rounds';
import type { WindowCooldown } from './window-cooldown';

/** What a window's server said of itself, as stored with its run. */
export interface WindowServer {
  effectiveConfig: EffectiveConfig | null;
  coldStart: ColdStart | null;
}

/** What an experiment of one model under several server profiles is handed (kvcache, adapter add their own conditions). */
export type ProfileExperimentOptions = SingleModelExperimentInputs & {
  repeats: number;
  /** Run every window rather than stopping once the speed verdicts are decided. */
  fixed?: boolean;
  requestsPerWindow: number | null;
  concurrency: number;
  constraints: QuantConstraints;
  kldText: { text: string; source: string } | null;
  signal?: AbortSignal;
  cooldown?: WindowCooldown | null;
  onStatus?: (line: string) => void;
};

/** Each condition's profile: the experiment's with its settings applied; one the rules refuse is named (`kind name: why`). */
export function conditionProfiles<C extends { name: string }>(
  base: ServerProfile,
  conditions: readonly C[],
  settingsOf: (condition: C) => string[],
  kind: string,
): Map<string, ServerProfile> {
  return new Map(
    conditions.map((condition) => {
      const profile = applySettings(base, settingsOf(condition));
      try {
        assertValidProfile(profile);
      } catch (error) {
        throw new AppError(ErrorCode.InvalidInput, `${kind} ${condition.name}: ${(error as Error).message}`);
      }
      return [condition.name, profile];
    }),
  );
}

/**
 * One model under several server profiles (a KV cache type, an adapter), each window of a
 * condition on a fresh server, conditions in rotated order, looking at the speed verdicts halfway
 * (`fixed`: every window). `afterWindow` reads what each window's server and run reported.
 */
export async function runProfileWindows<C extends { name: string }>(
  options: ProfileExperimentOptions,
  experimentId: string,
  conditions: readonly C[],
  profileOf: (condition: C) => ServerProfile,
  window: {
    describe: (condition: C) => string;
    after: (condition: C, server: WindowServer, summary: RunSummary) => void;
    /** Fields every request of the condition carries (a swapped adapter's per-request choice). */
    extraBody?: (condition: C) => Record<string, unknown> | undefined;
    /** Comparisons beyond the first condition against the others, looked at with them (VerdictOptions.pairs). */
    pairs?: VerdictOptions['pairs'];
  },
) {
  const runIds = new Map(conditions.map((condition) => [condition.name, [] as string[]]));
  const summariesSoFar = () =>
    conditions.map((condition) => ({ condition, ...summarizeCondition(options.runs, condition.name, runIds.get(condition.name)!) }));
  const runOne = async (index: number, condition: C) => {
    throwIfCancelled(options.signal);
    options.onStatus?.(`window ${index + 1}/${options.repeats}: ${window.describe(condition)}`);
    await options.cooldown?.beforeWindow(options.onStatus);
    const { summary } = await runWindow(
      options,
      { experimentId, condition: condition.name, window: index },
      {
        ...closedWindowRequest(
          { kind: 'model', modelRef: options.model.ref, modelPath: options.model.path, profile: profileOf(condition) },
          options,
          options.constraints.slo,
        ),
        extraBody: window.extraBody?.(condition),
      },
    );
    runIds.get(condition.name)!.push(summary.run_id);
    const stored = options.runs.getRun(summary.run_id)?.server_json;
    const server = stored ? (JSON.parse(stored) as Partial<WindowServer>) : {};
    window.after(condition, { effectiveConfig: server.effectiveConfig ?? null, coldStart: server.coldStart ?? null }, summary);
  };
  const stopping = await runWindowRounds(
    conditions,
    { repeats: options.repeats, fixed: options.fixed ?? false },
    runOne,
    (settings) => openSpeedVerdicts(summaryVerdicts(summariesSoFar(), settings, { pairs: window.pairs })).map(openName),
    options.onStatus,
  );
  return { stopping, summaries: summariesSoFar() };
}
