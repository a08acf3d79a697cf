import type { ExperimentKind } from '../../../shared/contract/experiments';
import { ADAPTER_REPORT } from './adapter/report-section';
import { CAPACITY_REPORT } from './capacity/report-section';
import type { KindReport } from './kind-report';
import { KVCACHE_REPORT } from './kvcache/report-section';
import { QUANT_REPORT } from './quant/report-section';
import { SPECULATIVE_REPORT } from './speculative/report-section';
import { SWEEP_REPORT } from './sweep/report-section';
import { WARMCOLD_REPORT } from './warmcold/report-section';

export type { KindReport } from './kind-report';

/** The report registry: one line per kind. */
export const KIND_REPORTS: Record<ExperimentKind, KindReport> = {
  quant: QUANT_REPORT,
  warmcold: WARMCOLD_REPORT,
  sweep: SWEEP_REPORT,
  capacity: CAPACITY_REPORT,
  speculative: SPECULATIVE_REPORT,
  kvcache: KVCACHE_REPORT,
  adapter: ADAPTER_REPORT,
};
