import type { KvCacheProtocol } from '../../../../shared/contract/experiment-kinds/kvcache';
import type { ExperimentResult } from '../../../../shared/contract/experiments';
import { barChart, escape, fmt, share } from '../../report-format';
import type { KindReport } from '../kind-report';

/** The KV cache section of an experiment report: memory, quality against the baseline cache, acceptance per group. */
function kvCacheReportSection(result: ExperimentResult): string {
  const conditions = result.conditions;
  const baseline = conditions[0];
  const groups = [...new Set(conditions.flatMap((condition) => Object.keys(condition.acceptance_by_group ?? {})))];
  // A record stored before a field existed lacks it: every field is read as possibly absent.
  const protocol: Partial<KvCacheProtocol> = result.kind === 'kvcache' ? result.protocol : {};
  const rows = conditions
    .map((condition) => {
      const types = condition.cache_types ? `K ${condition.cache_types.k}, V ${condition.cache_types.v}` : '—';
      const perGroup = groups
        .map((group) => {
          const entry = condition.acceptance_by_group?.[group];
          return `<td>${entry ? `${entry.accepted} of ${entry.judged}` : '—'}</td>`;
        })
        .join('');
      return `<tr><th>${escape(condition.name)}</th><td>${escape(types)}</td><td>${condition.kv_cache_mib == null ? '— (not in the log)' : `${fmt(condition.kv_cache_mib, 1)} MiB`}</td><td>${share(condition.token_agreement?.mean)}</td><td>${share(condition.token_agreement?.exact_match_rate)}</td><td>${fmt(condition.kld_mean, 6)}</td><td>${share(condition.same_top_p)}</td>${perGroup}</tr>`;
    })
    .join('');
  return `<h2>KV cache</h2><p>Context ${escape(protocol.context_size)} tokens; flash attention ${escape(protocol.flash_attention)}. KV memory is what the server allocated for its cache (its “KV buffer size” log lines, summed over devices); agreement and KLD are against the ${escape(baseline?.name)} cache on the same file.</p><table><tr><th>Condition</th><th>Cache types</th><th>KV memory</th><th>Token agreement</th><th>Exact match</th><th>KLD mean</th><th>Same top token</th>${groups.map((group) => `<th>Accepted: ${escape(group)}</th>`).join('')}</tr>${rows}</table>`;
}

export const KVCACHE_REPORT: KindReport = {
  title: 'KV cache types',
  section: kvCacheReportSection,
  charts: (result) => [
    barChart(
      'KV cache',
      'MiB',
      result.conditions.map((condition) => ({ label: condition.name, value: condition.kv_cache_mib ?? null })),
    ),
  ],
};
