import type { ConditionResult, ExperimentResult, RecommendationGate, VerdictRow } from '../../../../shared/contract/experiments';
import { describeVerdict, evaluateGates, qualityLine, speedRows, type QuantConstraints } from '../../recommend';

type Recommendation = ExperimentResult['recommendation'];

type Objective = NonNullable<QuantConstraints['objective']>;

/** How the adapters that pass every gate are ranked: by `--objective`, TPOT p50 unless it names another. */
const RANKINGS: Record<Objective, { text: string; figure: string; key: (condition: ConditionResult) => number[] }> = {
  tpot: {
    text: 'lowest TPOT p50 among the adapters that pass every gate, then TTFT p50',
    figure: 'TPOT p50',
    key: (c) => [tpotP50(c), ttftP50(c)],
  },
  ttft: {
    text: 'lowest TTFT p50 among the adapters that pass every gate, then TPOT p50',
    figure: 'TTFT p50',
    key: (c) => [ttftP50(c), tpotP50(c)],
  },
  memory: {
    text: "smallest adapter weights (the server's LoRA buffers) among the adapters that pass every gate, then TPOT p50",
    figure: 'adapter weights',
    key: (c) => [c.lora_mib ?? Number.POSITIVE_INFINITY, tpotP50(c)],
  },
};

/** The ranking figure of an adapter, as the reason shows it. */
const rankingFigure = (objective: Objective, condition: ConditionResult) =>
  objective === 'memory' ? mib(condition.lora_mib) : ms(condition.metrics[objective === 'tpot' ? 'tpot_ms' : 'ttft_ms'].p50, 2);

const byKey = (a: number[], b: number[]) => a.reduce((found, value, index) => found || value - b[index]!, 0);

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

/** Where the adapter was served both ways: the verdicts between its own server and the swapping one, at p50. */
function servingLine(base: ConditionResult, adapter: ConditionResult, verdicts: VerdictRow[]): string {
  const pair = verdicts.find((row) => row.a !== base.name && (row.a === adapter.name || row.b === adapter.name));
  if (!pair) return '';
  const speed = speedRows(verdicts, pair.a, pair.b).filter((row) => row.metric.endsWith('p50'));
  return ` Its own server against swapping it in per request (${pair.a} → ${pair.b}): ${speed.map(describeVerdict).join(', ') || 'no speed verdicts'}.`;
}

/**
 * Which adapter to serve: among those that pass every gate (acceptance not significantly below the
 * base model's, the SLO and the VRAM budget where set, an uncontaminated measurement), the first by
 * the objective: TPOT p50 unless `--objective` names TTFT or memory (the adapter's own weights). The base model is the reference, never the choice: the question is what a fine-tune
 * costs, not whether to have one. None passing: no choice, and why each failed.
 */
export function recommendAdapter(conditions: ConditionResult[], verdicts: VerdictRow[], constraints: QuantConstraints): Recommendation {
  const gates = adapterGates(conditions, constraints);
  const objective: Objective = constraints.objective ?? 'tpot';
  const ranking = RANKINGS[objective];
  const objectiveText = ranking.text;
  const [base, ...adapters] = conditions;
  if (!base || adapters.length === 0)
    return { choice: null, reason: 'No adapter was measured.', excluded: [], gates, objective: objectiveText };
  const excluded: Recommendation['excluded'] = [];
  const eligible = adapters.filter((adapter) => {
    const reasons = blockingReasons(gates, adapter.name);
    if (reasons.length > 0) excluded.push({ name: adapter.name, reason: reasons.join('; ') });
    return reasons.length === 0;
  });
  const [choice] = [...eligible].sort((a, b) => byKey(ranking.key(a), ranking.key(b)));
  if (!choice)
    return {
      choice: null,
      reason: `No adapter passes every gate: ${excluded.map((item) => `${item.name} (${item.reason})`).join('; ')}.`,
      excluded,
      gates,
      objective: objectiveText,
    };
  // The adapters are ranked by their figures, not by a verdict between them: say so where there is a ranking.
  const others =
    eligible.length > 1
      ? ` ${objective === 'memory' ? 'Smallest' : 'Lowest'} ${ranking.figure} of the ${eligible.length} that pass (${eligible.map((adapter) => `${adapter.name} ${rankingFigure(objective, adapter)}`).join(', ')}; no verdict compares different adapters with each other).`
      : '';
  return {
    choice: choice.name,
    reason: `${choice.name} passes every gate.${others} Against the base model: ${adapterCost(base, choice, verdicts)}.${servingLine(base, choice, verdicts)} Quality against the base model: ${qualityLine(choice)}.`,
    excluded,
    gates,
    objective: objectiveText,
  };
}
