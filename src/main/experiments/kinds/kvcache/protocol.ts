import type { KvCacheProtocol } from '../../../../shared/contract/experiment-kinds/kvcache';
import type { ConditionResult, ExperimentResult } from '../../../../shared/contract/experiments';
import type { ServerProfile } from '../../../../shared/contract/server';
import type { RequestRow } from '../../../store/run-rows';
import { qualityFields, windowsAndPassProtocol } from '../../agreement-pass';
import { KLD_CONTEXT, settingsQualityPass } from '../../settings-quality';
import { summaryVerdicts } from '../../condition-summary';
import { settleExperiment } from '../../experiment-inputs';
import { conditionProfiles, runProfileWindows, type ProfileExperimentOptions } from '../../profile-windows';
import { recommend } from '../../recommend';
import { verdictSettingsOf } from '../../window-rounds';
import { KV_CACHE_GATES } from './kv-cache-memory';
import { cachePerplexityArgs, cacheSettings, kvCacheMib, needsFlashAttention, type CacheCondition } from './cache-conditions';

/** Accepted of judged in each workload group: a long-document fact lost shows in its group first. */
export function acceptanceByGroup(rows: readonly RequestRow[]): Record<string, { accepted: number; judged: number }> {
  const groups: Record<string, { accepted: number; judged: number }> = {};
  for (const row of rows) {
    if (row.warmup !== 0 || (row.accepted === null && row.error_class === null)) continue;
    const entry = (groups[row.group_name ?? '(no group)'] ??= { accepted: 0, judged: 0 });
    entry.judged++;
    if (row.error_class === null && row.accepted === 1) entry.accepted++;
  }
  return groups;
}

const sum = (counts: Record<string, { accepted: number; judged: number }>) =>
  Object.values(counts).reduce((total, entry) => ({ accepted: total.accepted + entry.accepted, judged: total.judged + entry.judged }), {
    accepted: 0,
    judged: 0,
  });

type KvCacheOptions = ProfileExperimentOptions & {
  conditions: CacheCondition[];
  contextSize: number | null;
};

/** The timed windows, rotated: per condition the KV buffers its servers allocated and their peak VRAM. */
async function runCacheWindows(options: KvCacheOptions, experimentId: string, profiles: Map<string, ServerProfile>) {
  const perCondition = () => new Map(options.conditions.map((condition) => [condition.name, [] as number[]]));
  const [kvMib, serverVram] = [perCondition(), perCondition()];
  // The recommendation is quant's: it waits on the same speed verdicts.
  const { stopping, summaries } = await runProfileWindows(
    options,
    experimentId,
    options.conditions,
    (condition) => profiles.get(condition.name)!,
    {
      describe: (condition) => `KV cache ${condition.name}`,
      after: (condition, server, summary) => {
        const kv = kvCacheMib(server.effectiveConfig?.buffersMib);
        if (kv !== null) kvMib.get(condition.name)!.push(kv);
        const gpu = summary.telemetry?.gpu?.server_used_mib_peak;
        if (gpu != null) serverVram.get(condition.name)!.push(gpu);
      },
    },
  );
  return { kvMib, serverVram, stopping, summaries };
}

/** The untimed quality pass with each cache type, in the token pass and in llama-perplexity. */
function measureCacheQuality(options: KvCacheOptions, profiles: Map<string, ServerProfile>, flashAttention: boolean) {
  const conditions = options.conditions.map((condition) => ({
    name: condition.name,
    profile: profiles.get(condition.name)!,
    perplexityArgs: cachePerplexityArgs(condition, flashAttention),
  }));
  return settingsQualityPass(options, conditions, `the ${options.conditions[0]!.name} cache`);
}

/**
 * One model file under several KV cache types, each on a fresh server in rotated windows with the
 * same workload (by default long documents whose decisive fact sits near the end): the KV memory
 * the server allocated, TTFT/TPOT verdicts, acceptance per group; then, untimed, greedy token
 * agreement with the first (baseline) cache type and KL divergence from llama-perplexity run with
 * the same cache. The gates and the recommendation are the quantization experiment's, with memory
 * compared on the KV cache.
 */
export async function runKvCacheExperiment(options: KvCacheOptions): Promise<ExperimentResult> {
  const flashAttention = needsFlashAttention(options.conditions);
  const profiles = conditionProfiles(
    options.profile,
    options.conditions,
    (condition) => cacheSettings(condition, flashAttention, options.contextSize),
    'cache type',
  );
  const protocol: KvCacheProtocol = {
    kind: 'kvcache',
    cooldown: options.cooldown?.describe() ?? null,
    model: options.model.ref,
    cache_types: options.conditions.map(({ name, k, v }) => ({ name, k, v })),
    flash_attention: flashAttention
      ? 'on for every condition: a quantized V cache needs it, so the baseline runs with it too'
      : "the profile's, for every condition",
    context_size: options.contextSize ?? options.profile.contextSize,
    ...windowsAndPassProtocol(options),
  };
  const experimentId = options.experiments.create('kvcache', protocol);
  return settleExperiment(options, experimentId, async () => {
    const windows = await runCacheWindows(options, experimentId, profiles);
    const { summaries, stopping } = windows;
    const { pass, kld, kldMissing } = await measureCacheQuality(options, profiles, flashAttention);
    protocol.kld = { context: KLD_CONTEXT, text_source: pass.evalText.source, text_tokens: pass.evalText.tokens, text: pass.evalText.text };
    const max = (values: number[]) => (values.length === 0 ? null : Math.max(...values));
    const conditions: ConditionResult[] = summaries.map(({ condition, result, rows }, index) => {
      const groups = acceptanceByGroup(rows);
      return {
        ...result,
        cache_types: { k: condition.k, v: condition.v },
        // The largest a window saw: allocation is fixed by the context, so windows agree unless the server differed.
        kv_cache_mib: max(windows.kvMib.get(condition.name)!),
        vram: { baseline_mib: null, peak_mib: null, server_mib: max(windows.serverVram.get(condition.name)!) },
        ...qualityFields(condition.name, index === 0, pass, { results: kld, missing: kldMissing, context: KLD_CONTEXT }),
        acceptance: sum(groups),
        acceptance_by_group: groups,
      };
    });
    const verdicts = summaryVerdicts(summaries, verdictSettingsOf(stopping));
    return {
      experiment_id: experimentId,
      kind: 'kvcache',
      status: 'completed',
      protocol,
      conditions,
      verdicts,
      recommendation: recommend(conditions, verdicts, options.constraints, KV_CACHE_GATES),
      stopping,
    };
  });
}
