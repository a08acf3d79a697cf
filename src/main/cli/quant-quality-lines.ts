import type { ConditionResult, ExperimentResult } from '../../shared/contract/experiments';
import { formatShare } from './format';

/** A table cell for a condition's token agreement: the mean share and the exact-match rate. */
export function agreementCell(condition: ConditionResult): string {
  const agreement = condition.token_agreement;
  if (agreement?.mean == null) return formatShare(condition.agreement_with_baseline);
  return `${formatShare(agreement.mean)} (exact ${formatShare(agreement.exact_match_rate)})`;
}

/** A KL divergence in nats: tiny values in exponent form, so they do not read as zero. */
export function kldCell(kld: number | null | undefined): string {
  if (kld == null) return '—';
  return kld !== 0 && kld < 0.001 ? kld.toExponential(2) : kld.toFixed(4);
}

/** The lines under a quantization table: what the quality figures were measured on, and every gate. */
export function qualityLines(result: ExperimentResult): string[] {
  const baseline = result.conditions[0];
  if (!baseline) return [];
  const lines: string[] = [];
  const floor = baseline.token_agreement_noise_floor;
  const items = baseline.token_agreement?.items ?? floor?.items ?? 0;
  lines.push(
    `token agreement: share of ${baseline.name}'s greedy tokens reproduced before the first divergence, mean over ${items} items (untimed /completion pass); noise floor (${baseline.name} against a second pass of itself): ${floor?.mean == null ? `— (${floor?.error ?? 'not measured'})` : `${formatShare(floor.mean)}, exact ${formatShare(floor.exact_match_rate)}`}`,
  );
  for (const condition of result.conditions) {
    const agreement = condition.token_agreement;
    if (agreement?.error) lines.push(`  ${condition.name}: no token agreement: ${agreement.error}`);
    else if (agreement?.first_divergence_index_mean != null)
      lines.push(
        `  ${condition.name}: first divergence at token ${agreement.first_divergence_index_mean.toFixed(1)} on average, over the items that diverge`,
      );
  }
  const kld = 'kld' in result.protocol ? result.protocol.kld : undefined;
  lines.push(
    `KLD: llama-perplexity at context ${kld?.context ?? baseline.kld_context ?? '—'} on ${kld?.text_tokens ?? baseline.kld_tokens ?? '—'} tokens of text ${kld?.text_source ?? ''}`.trimEnd(),
  );
  for (const condition of result.conditions)
    if (condition.kld_mean == null && condition.kld_error) lines.push(`  ${condition.name}: no KLD: ${condition.kld_error}`);
  const gates = result.recommendation.gates ?? [];
  if (gates.length > 0) {
    lines.push(`gates${result.recommendation.objective ? ` (eligible ranked by ${result.recommendation.objective})` : ''}:`);
    for (const gate of gates) {
      lines.push(`  ${gate.name} — ${gate.threshold}`);
      for (const cell of gate.conditions) lines.push(`    ${cell.name}: ${cell.status}${cell.detail ? ` (${cell.detail})` : ''}`);
    }
  }
  return lines;
}
