import type { EmbeddingsSummary } from './contract/runs';

const figure = (value: number | null, digits: number) => (value === null ? '—' : value.toFixed(digits));

/** An embeddings (or reranking) run's texts and rates in one line, for the CLI summary and the Run view; its latency is the E2E row. */
export function embeddingsLine(embeddings: EmbeddingsSummary, kind: 'embeddings' | 'rerank' = 'embeddings'): string {
  const texts = kind === 'rerank' ? 'documents' : 'inputs';
  const tokens = embeddings.input_tokens === null ? 'input tokens not reported' : `${figure(embeddings.input_tokens_per_s, 1)} input tok/s`;
  return `${kind}: ${embeddings.inputs} ${texts} in ${embeddings.requests} requests (${figure(embeddings.inputs_per_request_mean, 1)} per request), ${figure(embeddings.inputs_per_s, 1)} ${texts}/s, ${tokens}; latency per request is E2E`;
}
