import type { ExperimentResult } from '../../../shared/contract/experiments';

/**
 * What one kind adds to the HTML report every experiment shares (recommendation, conditions,
 * verdicts, charts, protocol). Each kind's entry in the services' registry (services/experiment-kinds.ts)
 * loads its section with the first report of that kind.
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
