import type { AdapterProtocol, AdapterServing } from '../../../../shared/contract/experiment-kinds/adapter';
import type { ConditionResult, ExperimentResult } from '../../../../shared/contract/experiments';
import type { ServerProfile } from '../../../../shared/contract/server';
import { resolveModelRef } from '../../../models/demo-models';
import { qualityFields, windowsAndPassProtocol } from '../../agreement-pass';
import { KLD_CONTEXT, settingsQualityPass } from '../../settings-quality';
import { acceptanceCounts, summaryVerdicts } from '../../condition-summary';
import { settleExperiment } from '../../experiment-inputs';
import { conditionProfiles, runProfileWindows, type ProfileExperimentOptions } from '../../profile-windows';
import { verdictSettingsOf } from '../../window-rounds';
import {
  adapterPerplexityArgs,
  adapterSettings,
  loraMib,
  servingPairs,
  swappedChoice,
  swappedFiles,
  type AdapterCondition,
} from './conditions';
import { recommendAdapter } from './recommend-adapter';

type AdapterOptions = ProfileExperimentOptions & {
  /** The base model first, then each adapter at its scale, on a server of its own or swapped (or both). */
  conditions: AdapterCondition[];
  serving: AdapterServing;
};

const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length);
const max = (values: number[]) => (values.length === 0 ? null : Math.max(...values));

/** The timed windows, rotated: per condition the LoRA buffers, load times and peak VRAM of its servers. */
async function runAdapterWindows(options: AdapterOptions, experimentId: string, profiles: Map<string, ServerProfile>) {
  const perCondition = () => new Map(options.conditions.map((condition) => [condition.name, [] as number[]]));
  const [adapterMib, loadMs, serverVram] = [perCondition(), perCondition(), perCondition()];
  const { stopping, summaries } = await runProfileWindows(
    options,
    experimentId,
    options.conditions,
    (condition) => profiles.get(condition.name)!,
    {
      describe: (condition) => (condition.file === null ? 'the base model' : `adapter ${condition.name}`),
      extraBody: (condition) => (condition.swapped ? swappedChoice(condition, swappedFiles(options.conditions)) : undefined),
      pairs: servingPairs(options.conditions),
      after: (condition, server, summary) => {
        const lora = loraMib(server.effectiveConfig?.buffersMib);
        if (lora !== null) adapterMib.get(condition.name)!.push(lora);
        if (server.coldStart?.spawnToReadyMs != null) loadMs.get(condition.name)!.push(server.coldStart.spawnToReadyMs);
        const gpu = summary.telemetry?.gpu?.server_used_mib_peak;
        if (gpu != null) serverVram.get(condition.name)!.push(gpu);
      },
    },
  );
  return { adapterMib, loadMs, serverVram, stopping, summaries };
}

/**
 * The untimed quality pass with each adapter applied, in the token pass and in llama-perplexity: a
 * swapped condition's answers are its adapter's, so it is measured on a server of that adapter alone.
 */
async function measureAdapterQuality(options: AdapterOptions) {
  const alone = conditionProfiles(
    options.profile,
    options.conditions.map((condition) => ({ ...condition, swapped: false })),
    (condition) => adapterSettings(condition),
    'adapter',
  );
  const conditions = await Promise.all(
    options.conditions.map(async (condition) => ({
      name: condition.name,
      profile: alone.get(condition.name)!,
      perplexityArgs: adapterPerplexityArgs(condition, condition.file === null ? null : await resolveModelRef(condition.file)),
    })),
  );
  return settingsQualityPass(options, conditions, 'the base model');
}

/**
 * The base model against LoRA adapters applied to it, each condition on a fresh server in rotated
 * windows with the same workload: TTFT/TPOT verdicts against the base, the memory the adapter's
 * weights took (the server's LoRA buffer lines), the servers' load time, acceptance on the workload;
 * then, untimed, greedy token agreement and KL divergence against the base model, which say how far
 * each adapter moves the answers. The recommendation picks the fastest adapter that passes the gates.
 */
export async function runAdapterExperiment(options: AdapterOptions): Promise<ExperimentResult> {
  const files = swappedFiles(options.conditions);
  const profiles = conditionProfiles(options.profile, options.conditions, (condition) => adapterSettings(condition, files), 'adapter');
  const adapters = await Promise.all(
    options.conditions
      .filter((condition) => condition.file !== null && !condition.swapped)
      .map(async ({ name, file, scale }) => ({ name, file: file!, path: await resolveModelRef(file!), scale })),
  );
  const protocol: AdapterProtocol = {
    kind: 'adapter',
    cooldown: options.cooldown?.describe() ?? null,
    model: options.model.ref,
    adapters,
    serving: options.serving,
    ...windowsAndPassProtocol(options),
  };
  const experimentId = options.experiments.create('adapter', protocol);
  return settleExperiment(options, experimentId, async () => {
    const windows = await runAdapterWindows(options, experimentId, profiles);
    const { pass, kld, kldMissing } = await measureAdapterQuality(options);
    protocol.kld = { context: KLD_CONTEXT, text_source: pass.evalText.source, text_tokens: pass.evalText.tokens, text: pass.evalText.text };
    const conditions: ConditionResult[] = windows.summaries.map(({ condition, result, rows }, index) => ({
      ...result,
      lora:
        condition.file === null ? null : { file: condition.file, scale: condition.scale, ...(condition.swapped ? { swapped: true } : {}) },
      lora_mib: max(windows.adapterMib.get(condition.name)!),
      server_load_ms: mean(windows.loadMs.get(condition.name)!),
      vram: { baseline_mib: null, peak_mib: null, server_mib: max(windows.serverVram.get(condition.name)!) },
      ...qualityFields(condition.name, index === 0, pass, { results: kld, missing: kldMissing, context: KLD_CONTEXT }),
      acceptance: acceptanceCounts(rows),
    }));
    const verdicts = summaryVerdicts(windows.summaries, verdictSettingsOf(windows.stopping), { pairs: servingPairs(options.conditions) });
    return {
      experiment_id: experimentId,
      kind: 'adapter',
      status: 'completed',
      protocol,
      conditions,
      verdicts,
      recommendation: recommendAdapter(conditions, verdicts, options.constraints),
      stopping: windows.stopping,
    };
  });
}
