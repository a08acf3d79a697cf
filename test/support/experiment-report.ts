import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { renderExperimentReport } from '../../src/main/experiments/report';
import { kindReportOf } from '../../src/main/services/experiment-kinds';

/** An experiment's HTML report with its kind's own section, as the experiments service renders it. */
export async function reportHtml(result: ExperimentResult): Promise<string> {
  return renderExperimentReport(result, await kindReportOf(result.kind));
}
