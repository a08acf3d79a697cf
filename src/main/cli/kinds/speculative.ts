import { recommendationText } from '../recommendation-text';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { conditionMetricColumns } from '../condition-columns';
import { formatShare, formatTable } from '../format';
import { verdictTable } from '../verdict-table';
import { positiveInteger } from '../args';
import { listOf, text, type KindFlags } from './kind-flags';
import type { CliKind } from './cli-kind';
import { SPECULATIVE_TEXT } from './speculative-text';

/** Speculative decoding: speed, acceptance and greedy output per setting, then verdicts against spec off. */
function specTable(result: ExperimentResult, equivalence: NonNullable<ExperimentResult['greedy_equivalence']>): string {
  const metricColumns = conditionMetricColumns(result.conditions);
  const rows = [
    [
      'condition',
      'windows',
      'requests',
      ...metricColumns.headers,
      'accepted drafts',
      'per request p50',
      'min',
      'greedy output',
      'contaminated',
    ],
    ...result.conditions.map((condition) => {
      const check = equivalence.settings.find((setting) => setting.name === condition.name);
      const speculative = condition.speculative;
      return [
        condition.name,
        String(condition.windows_run ?? condition.run_ids.length),
        String(condition.requests.attempted),
        ...metricColumns.cells(condition),
        speculative
          ? `${speculative.accepted_tokens}/${speculative.drafted_tokens} (${formatShare(speculative.acceptance_rate)})`
          : '— (no draft)',
        formatShare(speculative?.acceptance_rate_per_request.p50),
        formatShare(speculative?.acceptance_rate_per_request.min),
        check ? (check.equivalent ? 'identical' : `DIFFERS on ${check.beyond_floor.length}`) : 'reference',
        condition.contaminated ? `YES: ${condition.contamination_reason}` : 'no',
      ];
    }),
  ];
  const floor = `greedy output over ${equivalence.items} items: spec off agreed with itself on ${equivalence.items - equivalence.floor_mismatches.length}${equivalence.floor_mismatches.length ? ` (not on ${equivalence.floor_mismatches.join(', ')})` : ''}`;
  const differing = equivalence.settings
    .filter((setting) => !setting.equivalent)
    .map((setting) => `  ${setting.name} differs from spec off on: ${setting.beyond_floor.join(', ')}`);
  return `${formatTable(rows)}

${floor}
${
  differing.length
    ? `${differing.join('\n')}
`
    : ''
}rule: ${equivalence.rule}

verdicts (each draft setting against spec off):
${verdictTable(result.verdicts)}

${recommendationText(result.recommendation, 'not chosen')}`;
}

/** --draft MODEL and --draft-max 4,8,16. */
const SPEC_FLAGS: KindFlags<'speculative'> = {
  flags: { draft: { type: 'string' }, 'draft-max': { type: 'string' }, fixed: { type: 'boolean' } },
  fromFlags: (values, { usage }) => {
    const draft = text(values, 'draft');
    if (!draft) return usage('experiment speculative needs --draft: a smaller model with the same vocabulary, e.g. demo:q4_k_m');
    const limits = text(values, 'draft-max');
    return {
      fields: {
        draftModel: draft,
        draftMax: limits === undefined ? null : listOf(limits).map((value) => positiveInteger('draft-max', value, 1)),
        fixed: values.fixed === true,
      },
    };
  },
};

export const SPECULATIVE_CLI: CliKind<'speculative'> = {
  text: SPECULATIVE_TEXT,
  formerNames: ['spec'],
  options: SPEC_FLAGS,
  table: (result) => (result.greedy_equivalence ? specTable(result, result.greedy_equivalence) : null),
};
