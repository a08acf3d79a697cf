import type { ServerProfile } from '../../shared/contract/server';
import { EXPERIMENT_DEFAULTS } from '../../shared/experiment-defaults';
import { toolPath } from '../engines/llamacpp/locate-engine';
import { kldMissingReason, tokenPass } from './agreement-pass';
import type { SingleModelExperimentInputs } from './experiment-inputs';
import { measureKld, type KldResult } from './kld';

/** The context of every KL-divergence pass. */
export const KLD_CONTEXT = EXPERIMENT_DEFAULTS.kldContext;

/** One condition of a model run under several server settings: its server profile and llama-perplexity's flags for the same setting. */
export interface SettingCondition {
  name: string;
  profile: ServerProfile;
  perplexityArgs: string[];
}

/**
 * The untimed quality pass of one model file under several settings (a KV cache type, a LoRA
 * adapter): greedy tokens from each condition's server, then KL divergence from llama-perplexity
 * run with each condition's flags against the first condition's, `against` naming it in the status line.
 */
export async function settingsQualityPass(
  options: Pick<SingleModelExperimentInputs, 'servers' | 'runs' | 'engine' | 'model' | 'profile' | 'workload'> & {
    kldText: { text: string; source: string } | null;
    signal?: AbortSignal;
    onStatus?: (line: string) => void;
  },
  conditions: SettingCondition[],
  against: string,
) {
  const pass = await tokenPass({
    servers: options.servers,
    hashes: options.runs.hashes,
    files: conditions.map((condition) => ({ name: condition.name, file: options.model.path, profile: condition.profile })),
    profile: options.profile,
    workload: options.workload,
    kldContext: KLD_CONTEXT,
    signal: options.signal,
    onStatus: options.onStatus,
    kldText: options.kldText,
  });
  const perplexity = toolPath(await options.engine(), 'llama-perplexity');
  let kld = new Map<string, KldResult>();
  if (perplexity && pass.evalText.error === null) {
    options.onStatus?.(`measuring KL divergence against ${against} with llama-perplexity`);
    kld = await measureKld({
      perplexityBinary: perplexity,
      baseline: options.model.path,
      baselineArgs: conditions[0]!.perplexityArgs,
      candidates: conditions.map((condition) => ({ name: condition.name, file: options.model.path, args: condition.perplexityArgs })),
      text: pass.evalText.text,
      tokens: pass.evalText.tokens,
      context: KLD_CONTEXT,
      threads: options.profile.threads,
      signal: options.signal,
    });
  }
  return { pass, kld, kldMissing: kldMissingReason(perplexity, pass.evalText) };
}
