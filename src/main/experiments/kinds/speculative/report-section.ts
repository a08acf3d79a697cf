import type { ExperimentResult } from '../../../../shared/contract/experiments';
import { escape, share } from '../../report-format';
import type { KindReport } from '../kind-report';

/** Speculative decoding: acceptance per setting, and whether greedy outputs stayed the same. */
function speculativeSection(result: ExperimentResult): string {
  const equivalence = result.greedy_equivalence;
  if (!equivalence) return '';
  const rows = result.conditions
    .map((condition) => {
      const check = equivalence.settings.find((setting) => setting.name === condition.name);
      const speculative = condition.speculative;
      return `<tr><th>${escape(condition.name)}</th><td>${speculative ? `${speculative.accepted_tokens} of ${speculative.drafted_tokens} (${share(speculative.acceptance_rate)})` : '— (no draft)'}</td><td>${share(speculative?.acceptance_rate_per_request.p50)}</td><td>${share(speculative?.acceptance_rate_per_request.min)}</td><td class="${check && !check.equivalent ? 'bad' : ''}">${check ? (check.equivalent ? 'identical' : `differs on ${escape(check.beyond_floor.join(', '))}`) : 'reference'}</td><td>${check ? share(check.agreement.exact_match_rate) : share(equivalence.noise_floor.exact_match_rate)}</td></tr>`;
    })
    .join('');
  return `<h2>Speculative decoding</h2><table><tr><th>Condition</th><th>Drafted tokens accepted</th><th>Per request p50</th><th>Per request min</th><th>Greedy output</th><th>Exact match with spec off</th></tr>${rows}</table><p>${equivalence.items} items; the spec-off pass agreed with itself on ${equivalence.items - equivalence.floor_mismatches.length}${equivalence.floor_mismatches.length ? ` (differed on ${escape(equivalence.floor_mismatches.join(', '))})` : ''}. The reference row’s exact match is spec off against itself.</p><p><small>${escape(equivalence.rule)}</small></p>`;
}

export const SPECULATIVE_REPORT: KindReport = { title: 'Speculative decoding', section: speculativeSection };
