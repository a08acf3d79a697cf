import type { SpeculativeProtocol } from '../../../../shared/contract/experiment-kinds/speculative';
import type { ConditionResult, ExperimentResult, GreedyEquivalence, VerdictRow } from '../../../../shared/contract/experiments';
import type { ServerProfile } from '../../../../shared/contract/server';
import { EXPERIMENT_DEFAULTS } from '../../../../shared/experiment-defaults';
import { ErrorCode } from '../../../../shared/errors';
import { AppError } from '../../../core/errors';
import { assertValidProfile } from '../../../engines/llamacpp/profile-rules';
import { speculativeSummary } from '../../../metrics/run-summary';
import type { VerdictSettings } from '../../../metrics/window-verdicts';
import type { RunStore } from '../../../store/run-store';
import { toMeasuredRequest } from '../../../store/run-rows';
import { firstDivergence, tokenAgreement } from '../../agreement';
import { conditionVerdicts, judgedCondition, summarizeCondition } from '../../condition-summary';
import { openSpeedVerdicts } from '../../recommend';
import { openName, verdictSettingsOf } from '../../window-rounds';
import { settleExperiment, type SingleModelExperimentInputs } from '../../experiment-inputs';
import { runSettingWindows, type WindowGoodput } from '../../setting-windows';
import { collectTokens, passItems, startPassServer } from '../../token-pass';
import type { WindowCooldown } from '../../window-cooldown';

export const SPEC_OFF = 'spec off';
const settingName = (draftMax: number) => `draft-max ${draftMax}`;

export const GREEDY_EQUIVALENCE_RULE =
  'temperature 0, one request at a time, no prompt cache: each draft setting against the spec-off pass token for token; spec-off run a second time on a fresh server is the noise floor, and only a mismatch on an item where the two spec-off passes agreed counts against a setting';

/**
 * Does a draft model speed up this workload without changing its output? Spec off and each
 * draft limit run in rotated windows on fresh servers (as a sweep does), with TPOT and
 * throughput verdicts against spec off; then untimed greedy passes check the outputs.
 */
export async function runSpeculativeExperiment(options: SpeculativeOptions): Promise<ExperimentResult> {
  const repeats = options.repeats ?? EXPERIMENT_DEFAULTS.repeats;
  const settings: { value: string; profile: ServerProfile }[] = [
    { value: SPEC_OFF, profile: { ...options.profile, draftModel: null } },
    ...options.draftMax.map((draftMax) => ({
      value: settingName(draftMax),
      profile: { ...options.profile, draftModel: options.draftModel, draftMax, draftMin: Math.min(options.profile.draftMin, draftMax) },
    })),
  ];
  for (const setting of settings) assertValidProfile(setting.profile);
  const protocol = speculativeProtocol(options, repeats);
  const experimentId = options.experiments.create('speculative', protocol);
  const conditions = settings.map(({ value }) => ({
    name: value,
    value,
    concurrency: options.concurrency,
    runIds: [] as string[],
    goodput: [] as WindowGoodput[],
  }));
  const summariesSoFar = () => conditions.map((condition) => summarizeCondition(options.runs, condition.name, condition.runIds));
  // Every draft limit against spec off, throughput included (its recommendation ranks by it).
  const verdictsOf = (summaries: ReturnType<typeof summariesSoFar>, settings: VerdictSettings): VerdictRow[] =>
    conditionVerdicts(
      summaries.map(({ result, windows }) => judgedCondition(result, windows)),
      settings,
      { throughput: true },
    );
  return settleExperiment(options, experimentId, async () => {
    const stopping = await runSettingWindows(
      { ...options, slo: null },
      {
        experimentId,
        settings,
        concurrencies: [options.concurrency],
        repeats,
        conditions,
        nameOf: (value) => value,
        describe: (value) => value,
        // Its answer rests on its speed verdicts against spec off, as a quantization's does.
        openAfter: options.fixed ? undefined : (looked) => openSpeedVerdicts(verdictsOf(summariesSoFar(), looked)).map(openName),
      },
    );
    const summaries = summariesSoFar();
    refuseFailedRuns(options.runs, conditions);

    options.onStatus?.('greedy passes: spec off twice, then each draft setting');
    const equivalence = await greedyEquivalence(options, settings);
    const verdicts = verdictsOf(summaries, verdictSettingsOf(stopping));
    const results: ConditionResult[] = conditions.map((condition, index) => {
      const { result, rows } = summaries[index]!;
      const measured = rows.map(toMeasuredRequest).filter((row) => !row.warmup && row.error_class === null);
      return {
        ...result,
        setting: { field: 'draftMax', value: condition.value },
        concurrency: condition.concurrency,
        windows_run: condition.runIds.length,
        speculative: speculativeSummary(measured),
      };
    });
    const result: ExperimentResult = {
      experiment_id: experimentId,
      kind: 'speculative',
      status: 'completed',
      protocol,
      conditions: results,
      verdicts,
      recommendation: speculativeRecommendation(results, verdicts, equivalence),
      greedy_equivalence: equivalence,
      stopping,
    };
    return result;
  });
}

/** One untimed greedy pass per setting, spec off twice, each on a fresh server of its own. */
async function greedyEquivalence(
  options: SingleModelExperimentInputs & { signal?: AbortSignal; onStatus?: (line: string) => void },
  settings: { value: string; profile: ServerProfile }[],
): Promise<GreedyEquivalence> {
  // One slot and no host cache: an earlier item must not change a later one's numerics.
  const passProfile = (profile: ServerProfile): ServerProfile => ({ ...profile, parallelSlots: 1, cacheRamMib: 0 });
  const pass = async (profile: ServerProfile, label: string) => {
    options.onStatus?.(`greedy pass: ${label}`);
    const server = await startPassServer(options.servers, options.model.path, passProfile(profile));
    try {
      const items = await passItems(server.address, options.workload);
      return await collectTokens(server.address, items, options.signal);
    } finally {
      await server.stop();
    }
  };
  const [off, ...drafted] = settings;
  const baseline = await pass(off!.profile, `${SPEC_OFF} (1 of 2)`);
  const repeat = await pass(off!.profile, `${SPEC_OFF} (2 of 2)`);
  const differs = (a: readonly number[], b: readonly number[] | undefined) =>
    b === undefined || firstDivergence(a, b) !== a.length || a.length !== b.length;
  const floorMismatches = [...baseline].filter(([key, tokens]) => differs(tokens, repeat.get(key))).map(([key]) => key);
  const floor = new Set(floorMismatches);
  const perSetting: GreedyEquivalence['settings'] = [];
  for (const setting of drafted) {
    const tokens = await pass(setting.profile, setting.value);
    const mismatches = [...baseline].filter(([key, reference]) => differs(reference, tokens.get(key))).map(([key]) => key);
    const beyondFloor = mismatches.filter((key) => !floor.has(key));
    perSetting.push({
      name: setting.value,
      agreement: tokenAgreement(baseline, tokens),
      mismatches,
      beyond_floor: beyondFloor,
      equivalent: beyondFloor.length === 0,
    });
  }
  return {
    rule: GREEDY_EQUIVALENCE_RULE,
    items: baseline.size,
    noise_floor: tokenAgreement(baseline, repeat),
    floor_mismatches: floorMismatches,
    settings: perSetting,
  };
}

/**
 * A draft setting is recommended only when its greedy outputs match spec off beyond the noise
 * floor and its TPOT p50 is shown faster; among those, the highest output throughput wins.
 */
export function speculativeRecommendation(
  conditions: readonly ConditionResult[],
  verdicts: readonly VerdictRow[],
  equivalence: GreedyEquivalence,
): ExperimentResult['recommendation'] {
  const excluded: { name: string; reason: string }[] = [];
  const eligible: ConditionResult[] = [];
  for (const condition of conditions.slice(1)) {
    const check = equivalence.settings.find((setting) => setting.name === condition.name);
    const tpot = verdicts.find((row) => row.b === condition.name && row.metric === 'tpot_ms p50');
    if (!check?.equivalent) {
      excluded.push({
        name: condition.name,
        reason: `greedy output differs from spec off on ${check?.beyond_floor.length ?? '?'} item(s) where spec off agreed with itself: ${(check?.beyond_floor ?? []).slice(0, 5).join(', ')}`,
      });
    } else if (tpot?.verdict !== 'faster') {
      excluded.push({ name: condition.name, reason: `TPOT p50 is not shown faster than spec off (${tpot?.verdict ?? 'no verdict'})` });
    } else eligible.push(condition);
  }
  const best = eligible.reduce<ConditionResult | null>(
    (top, condition) =>
      top === null || (condition.throughput.output_tokens_per_s ?? 0) > (top.throughput.output_tokens_per_s ?? 0) ? condition : top,
    null,
  );
  if (best === null)
    return {
      choice: SPEC_OFF,
      reason: 'no draft setting was both shown faster (TPOT p50) and greedy-equivalent to spec off: keep speculative decoding off',
      excluded,
    };
  const acceptance = best.speculative?.acceptance_rate;
  return {
    choice: best.name,
    reason: `${best.name}: TPOT p50 shown faster than spec off with the same greedy output${acceptance == null ? '' : `; ${(acceptance * 100).toFixed(1)} % of drafted tokens accepted`}; the highest output throughput of the settings that qualify`,
    excluded,
  };
}

type SpeculativeOptions = SingleModelExperimentInputs & {
  draftModel: string;
  draftMax: number[];
  concurrency: number;
  requestsPerCondition: number | null;
  /** Windows per condition at most. */
  repeats?: number;
  /** Run every window rather than stopping once the TPOT verdicts are decided. */
  fixed?: boolean;
  cooldown?: WindowCooldown | null;
  signal?: AbortSignal;
  onStatus?: (line: string) => void;
};

/** What the experiment's record says it did. */
function speculativeProtocol(options: SpeculativeOptions, repeats: number): SpeculativeProtocol {
  return {
    kind: 'speculative',
    model: options.model.ref,
    draft_model: options.draftModel,
    draft_max: options.draftMax,
    workload: options.workload.def.name,
    concurrency: options.concurrency,
    repeats,
    requests_per_condition: options.requestsPerCondition,
    profile: options.profile,
    windows:
      'each window starts spec off and every draft setting on a fresh server, in rotated order; verdicts compare each draft setting with spec off',
    greedy_equivalence: GREEDY_EQUIVALENCE_RULE,
    cooldown: options.cooldown?.describe() ?? null,
  };
}

/** A failed window leaves nothing to compare its setting by: the experiment stops, naming each. */
function refuseFailedRuns(runs: RunStore, conditions: readonly { name: string; runIds: string[] }[]): void {
  const failed = conditions.flatMap((condition) =>
    condition.runIds.flatMap((runId) => {
      const run = runs.getRun(runId);
      return run?.status === 'failed' ? [`${condition.name}: run ${runId.slice(0, 8)} failed: ${run.status_reason}`] : [];
    }),
  );
  if (failed.length > 0) throw new AppError(ErrorCode.RequestFailed, `the experiment cannot compare settings: ${failed.join('; ')}`);
}
