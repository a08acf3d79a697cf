import type { ExperimentResult } from '../../../shared/contract/experiments';

/**
 * What one kind adds to the HTML report every experiment shares (recommendation, conditions,
 * verdicts, charts, protocol). Declared apart from the registry (report-registry.ts), which
 * imports the kinds' sections, so that no section imports the registry back.
 */
export interface KindReport {
  title: string;
  /** The kind's own section, after the conditions table. */
  section?: (result: ExperimentResult) => string;
  /** Charts beyond TTFT, TPOT and throughput. */
  charts?: (result: ExperimentResult) => string[];
  /** The kind reports its own decisions in its section instead of the verdicts table (capacity). */
  ownVerdicts?: boolean;
}
