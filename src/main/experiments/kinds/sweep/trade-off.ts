import type { ConditionResult } from '../../../../shared/contract/experiments';
import { everyOneRanEmbeddings } from '../../../../shared/metric-columns';

/**
 * What a sweep's Pareto set trades off: throughput against tail latency. For generated answers that
 * is output tokens/s against TTFT p95; an embeddings request has no first token and no output, so
 * there it is inputs/s against latency per request (E2E) p95.
 */
export interface TradeOffAxes {
  throughput: string;
  throughputUnit: string;
  latency: string;
  throughputOf: (condition: ConditionResult) => number | null;
  latencyOf: (condition: ConditionResult) => number | null;
}

const ANSWERS: TradeOffAxes = {
  throughput: 'output tokens/s',
  throughputUnit: 'tok/s',
  latency: 'TTFT p95',
  throughputOf: (condition) => condition.throughput.output_tokens_per_s,
  latencyOf: (condition) => condition.metrics.ttft_ms.p95,
};

const EMBEDDINGS: TradeOffAxes = {
  throughput: 'inputs/s',
  throughputUnit: 'inputs/s',
  latency: 'latency (E2E) p95',
  throughputOf: (condition) => condition.embeddings?.inputs_per_s ?? null,
  latencyOf: (condition) => condition.metrics.e2e_ms.p95,
};

/** The axes of these conditions: embeddings where every condition ran them. */
export const tradeOffAxes = (conditions: readonly ConditionResult[]): TradeOffAxes =>
  everyOneRanEmbeddings(conditions) ? EMBEDDINGS : ANSWERS;
