import type { ConditionResult, ExperimentResult, RecommendationGate, VerdictRow } from '../../../../shared/contract/experiments';
import { describeVerdict, evaluateGates, qualityLine, speedRows, type QuantConstraints } from '../../recommend';

type Recommendation = ExperimentResult['recommendation'];

const OBJECTIVE = 'lowest TPOT p50 among the adapters that pass every gate, then TTFT p50';

/**
 * The quantization experiment's gates, less the two that ask a condition to answer as the baseline
 * does: an adapter is trained to change the answers, so token agreement and KLD against the base
 * model are reported, and gate only where the person set a threshold for them.
 */
export function adapterGates(conditions: ConditionResult[], constraints: QuantConstraints): RecommendationGate[] {
  return evaluateGates(conditions, constraints).filter(
    (gate) =>
      !(gate.name === 'token agreement' && constraints.minAgreement == null) && !(gate.name === 'kld' && constraints.maxKld == null),
  );
}

function blockingReasons(gates: RecommendationGate[], name: string): string[] {
  return gates.flatMap((gate) =>
    gate.conditions
      .filter((cell) => cell.name === name && (cell.status === 'fail' || cell.status === 'unknown'))
      .map((cell) => `${gate.name} ${cell.status === 'fail' ? 'failed' : 'cannot pass'}: ${cell.detail}`),
  );
}

const tpotP50 = (condition: ConditionResult) => condition.metrics.tpot_ms.p50 ?? Number.POSITIVE_INFINITY;
const ttftP50 = (condition: ConditionResult) => condition.metrics.ttft_ms.p50 ?? Number.POSITIVE_INFINITY;
const mib = (value: number | null | undefined) => (value == null ? 'not in the log' : `${value.toFixed(2)} MiB`);
const ms = (value: number | null | undefined, digits = 0) => (value == null ? 'unknown' : `${value.toFixed(digits)} ms`);

/** What an adapter costs against the base model, in a line: speed verdicts, its weights' memory, the servers' load time. */
export function adapterCost(base: ConditionResult, adapter: ConditionResult, verdicts: VerdictRow[]): string {
  const speed = speedRows(verdicts, base.name, adapter.name).filter((row) => row.metric.endsWith('p50'));
  return [
    speed.map(describeVerdict).join(', ') || 'no speed verdicts',
    `adapter weights ${mib(adapter.lora_mib)}`,
    `load ${ms(adapter.server_load_ms)} against ${ms(base.server_load_ms)}`,
  ].join('; ');
}

/**
 * Which adapter to serve: among those that pass every gate (acceptance not significantly below the
 * base model's, the SLO and the VRAM budget where set, an uncontaminated measurement), the fastest
 * by TPOT p50. The base model is the reference, never the choice: the question is what a fine-tune
 * costs, not whether to have one. None passing: no choice, and why each failed.
 */
export function recommendAdapter(conditions: ConditionResult[], verdicts: VerdictRow[], constraints: QuantConstraints): Recommendation {
  const gates = adapterGates(conditions, constraints);
  const [base, ...adapters] = conditions;
  if (!base || adapters.length === 0)
    return { choice: null, reason: 'No adapter was measured.', excluded: [], gates, objective: OBJECTIVE };
  const excluded: Recommendation['excluded'] = [];
  const eligible = adapters.filter((adapter) => {
    const reasons = blockingReasons(gates, adapter.name);
    if (reasons.length > 0) excluded.push({ name: adapter.name, reason: reasons.join('; ') });
    return reasons.length === 0;
  });
  const [choice] = [...eligible].sort((a, b) => tpotP50(a) - tpotP50(b) || ttftP50(a) - ttftP50(b));
  if (!choice)
    return {
      choice: null,
      reason: `No adapter passes every gate: ${excluded.map((item) => `${item.name} (${item.reason})`).join('; ')}.`,
      excluded,
      gates,
      objective: OBJECTIVE,
    };
  // The adapters are ranked by their figures, not by a verdict between them: say so where there is a ranking.
  const others =
    eligible.length > 1
      ? ` Lowest TPOT p50 of the ${eligible.length} that pass (${eligible.map((adapter) => `${adapter.name} ${ms(adapter.metrics.tpot_ms.p50, 2)}`).join(', ')}; no verdict compares the adapters with each other).`
      : '';
  return {
    choice: choice.name,
    reason: `${choice.name} passes every gate.${others} Against the base model: ${adapterCost(base, choice, verdicts)}. Quality against the base model: ${qualityLine(choice)}.`,
    excluded,
    gates,
    objective: OBJECTIVE,
  };
}
