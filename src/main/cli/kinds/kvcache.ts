import type { KvCacheSpec } from '../../../shared/contract/experiment-kinds/kvcache';
import type { ConditionResult, ExperimentResult } from '../../../shared/contract/experiments';
import { positiveInteger } from '../args';
import { formatShare } from '../format';
import { agreementCell, kldCell, qualityLines } from '../quant-quality-lines';
import { constraintsFromFlags, kldTextFileFromFlags } from '../quant-flags';
import type { FlagValues, KindFlags } from './kind-flags';
import type { CliKind } from './cli-kind';
import { KVCACHE_TEXT } from './kvcache-text';

/** --types and --ctx → the spec's kvCache; the service checks the types themselves, for every face alike. */
function kvCacheFromFlags(values: { types?: string; ctx?: string }): KvCacheSpec['kvCache'] {
  return {
    types: (values.types ?? '')
      .split(',')
      .map((type) => type.trim())
      .filter(Boolean),
    contextSize: values.ctx === undefined ? null : positiveInteger('ctx', values.ctx, 1),
  };
}

/** The columns a KV cache experiment adds to the condition table. */
const KVCACHE_COLUMNS = {
  header: ['KV cache', 'token agreement', 'KLD', 'same top', 'accepted'],
  cells: (condition: ConditionResult): string[] => [
    condition.kv_cache_mib == null ? '—' : `${condition.kv_cache_mib.toFixed(1)} MiB`,
    agreementCell(condition),
    kldCell(condition.kld_mean),
    formatShare(condition.same_top_p),
    condition.acceptance && condition.acceptance.judged > 0 ? `${condition.acceptance.accepted}/${condition.acceptance.judged}` : '—',
  ],
};

/** Acceptance in each workload group: a lost long-document fact shows where it was lost. */
function kvCacheGroupLines(result: ExperimentResult): string[] {
  const groups = [...new Set(result.conditions.flatMap((condition) => Object.keys(condition.acceptance_by_group ?? {})))];
  if (groups.length === 0) return [];
  const flash = result.kind === 'kvcache' ? result.protocol.flash_attention : undefined;
  return [
    ...(flash ? [`flash attention: ${flash}`] : []),
    'accepted per workload group:',
    ...result.conditions.map(
      (condition) =>
        `  ${condition.name}: ${groups
          .map((group) => {
            const entry = condition.acceptance_by_group?.[group];
            return `${group} ${entry ? `${entry.accepted}/${entry.judged}` : '—'}`;
          })
          .join(', ')}`,
    ),
  ];
}

/** --types and --ctx, and the quality gates quant has. */
const KVCACHE_FLAGS: KindFlags<'kvcache'> = {
  flags: { types: { type: 'string' }, ctx: { type: 'string' }, fixed: { type: 'boolean' } },
  insteadOf: { quants: 'experiment kvcache takes --types' },
  fromFlags: (values: FlagValues, { slo }) => ({
    fields: {
      kvCache: kvCacheFromFlags(values as { types?: string; ctx?: string }),
      constraints: constraintsFromFlags(values as Parameters<typeof constraintsFromFlags>[0], slo),
      kldTextFile: kldTextFileFromFlags(values),
      fixed: values.fixed === true,
    },
  }),
};

export const KVCACHE_CLI: CliKind<'kvcache'> = {
  text: KVCACHE_TEXT,
  options: KVCACHE_FLAGS,
  columns: KVCACHE_COLUMNS,
  lines: (result) => [...kvCacheGroupLines(result), ...qualityLines(result)],
};
