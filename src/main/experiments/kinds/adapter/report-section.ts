import type { AdapterProtocol } from '../../../../shared/contract/experiment-kinds/adapter';
import type { ExperimentResult } from '../../../../shared/contract/experiments';
import { barChart, escape, fmt, share } from '../../report-format';
import type { KindReport } from '../kind-report';

/** The adapter section of an experiment report: each adapter, its weights' memory, load time, and how far it moves the answers. */
function adapterReportSection(result: ExperimentResult): string {
  // A record stored before a field existed lacks it: every field is read as possibly absent.
  const protocol: Partial<AdapterProtocol> = result.kind === 'adapter' ? result.protocol : {};
  const base = result.conditions[0];
  const rows = result.conditions
    .map((condition) => {
      const applied = condition.lora ? `${condition.lora.file} at scale ${condition.lora.scale}` : 'none (the base model)';
      const acceptance =
        condition.acceptance && condition.acceptance.judged > 0
          ? `${condition.acceptance.accepted} of ${condition.acceptance.judged}`
          : '—';
      return `<tr><th>${escape(condition.name)}</th><td>${escape(applied)}</td><td>${condition.lora_mib == null ? '—' : `${fmt(condition.lora_mib, 2)} MiB`}</td><td>${condition.server_load_ms == null ? '—' : `${fmt(condition.server_load_ms, 0)} ms`}</td><td>${share(condition.token_agreement?.mean)}</td><td>${fmt(condition.kld_mean, 6)}</td><td>${share(condition.same_top_p)}</td><td>${acceptance}</td></tr>`;
    })
    .join('');
  const files = (protocol.adapters ?? []).map((adapter) => `${escape(adapter.name)}: ${escape(adapter.path)}`).join('; ');
  return `<h2>Adapters</h2><p>Model ${escape(protocol.model)}; each adapter on a fresh server of the same profile. Adapter memory is what the server allocated for the adapter's weights (its “LoRA buffer size” log lines, summed over devices); load time is the servers' mean from spawn to ready; agreement and KLD against ${escape(base?.name)} say how far the adapter moves the answers, which is what it was trained to do, so they do not gate unless a threshold was set. Files: ${files || '—'}.</p><table><tr><th>Condition</th><th>Adapter</th><th>Adapter memory</th><th>Load</th><th>Token agreement</th><th>KLD mean</th><th>Same top token</th><th>Accepted</th></tr>${rows}</table>`;
}

export const ADAPTER_REPORT: KindReport = {
  title: 'LoRA adapters',
  section: adapterReportSection,
  charts: (result) => [
    barChart(
      'Server load time',
      'ms',
      result.conditions.map((condition) => ({ label: condition.name, value: condition.server_load_ms ?? null })),
    ),
  ],
};
