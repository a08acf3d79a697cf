import type { ExperimentKind, ExperimentResult } from '../../../shared/contract/experiments';
import { CAPACITY_REPORT } from './capacity/report-section';
import { KVCACHE_REPORT } from './kvcache/report-section';
import { QUANT_REPORT } from './quant/report-section';
import { SPECULATIVE_REPORT } from './speculative/report-section';
import { SWEEP_REPORT } from './sweep/report-section';
import { WARMCOLD_REPORT } from './warmcold/report-section';

/** What one kind adds to the HTML report every experiment shares (recommendation, conditions, verdicts, charts, protocol). */
export interface KindReport {
  title: string;
  /** The kind's own section, after the conditions table. */
  section?: (result: ExperimentResult) => string;
  /** Charts beyond TTFT, TPOT and throughput. */
  charts?: (result: ExperimentResult) => string[];
  /** The kind reports its own decisions in its section instead of the verdicts table (capacity). */
  ownVerdicts?: boolean;
}

/** The report registry: one line per kind. */
export const KIND_REPORTS: Record<ExperimentKind, KindReport> = {
  quant: QUANT_REPORT,
  warmcold: WARMCOLD_REPORT,
  sweep: SWEEP_REPORT,
  capacity: CAPACITY_REPORT,
  speculative: SPECULATIVE_REPORT,
  kvcache: KVCACHE_REPORT,
};
