import type { ExperimentResult } from '../../../../shared/contract/experiments';
import { escape, fmt } from '../../report-format';
import type { KindReport } from '../kind-report';

/** Per-request cache evidence and the fresh starts of the cold-process condition. */
function evidenceSection(result: ExperimentResult): string {
  const proven = result.conditions.filter((condition) => condition.cache_evidence);
  const cold = result.conditions.find((condition) => condition.cold_starts)?.cold_starts;
  const parts: string[] = [];
  if (proven.length > 0) {
    parts.push(
      `<h2>Cache evidence</h2><p>Per measured request, from the server's own cached-token counts; a request without a count is unknown, never 0; one contradicting request contaminates its condition.</p><table><tr><th>Condition</th><th>Claim</th><th>Confirmed</th><th>Contradicted</th><th>Unknown</th><th>Evidence</th></tr>${proven
        .map((condition) => {
          const evidence = condition.cache_evidence!;
          return `<tr><th>${escape(condition.name)}</th><td>${escape(evidence.expect)}</td><td>${evidence.confirmed} of ${evidence.measured}</td><td class="${evidence.contradicted > 0 ? 'bad' : ''}">${evidence.contradicted}</td><td>${evidence.unknown}</td><td>${escape(evidence.summary)}</td></tr>`;
        })
        .join(
          '',
        )}</table><p><small>${proven.map((condition) => `${escape(condition.name)}: ${escape(condition.cache_evidence!.rule)}`).join('<br>')}</small></p>`,
    );
  }
  if (cold) {
    parts.push(
      `<h2>Fresh starts (cold-process)</h2><p>${cold.starts.length} fresh servers, each measured on the first request it answered: spawn → ready p50 ${fmt(cold.spawn_to_ready_ms.p50, 1)} ms (min ${fmt(cold.spawn_to_ready_ms.min, 1)}, max ${fmt(cold.spawn_to_ready_ms.max, 1)}); first-request TTFT p50 ${fmt(cold.ttft_ms.p50, 1)} ms (min ${fmt(cold.ttft_ms.min, 1)}, max ${fmt(cold.ttft_ms.max, 1)}).</p>`,
    );
  }
  return parts.join('\n');
}

export const WARMCOLD_REPORT: KindReport = { title: 'Warm against cold', section: evidenceSection };
