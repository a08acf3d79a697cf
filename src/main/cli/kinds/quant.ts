import type { ConditionResult } from '../../../shared/contract/experiments';
import { formatMs, formatShare } from '../format';
import { agreementCell, kldCell, qualityLines } from '../quant-quality-lines';
import type { CliKind } from './registry';

/** The columns a quantization experiment adds to the condition table: file size, load time and quality against the baseline. */
const QUANT_COLUMNS = {
  header: ['size', 'load', 'token agreement', 'KLD', 'same top'],
  cells: (condition: ConditionResult) => [
    `${((condition.file_bytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
    formatMs(condition.load_ms),
    agreementCell(condition),
    kldCell(condition.kld_mean),
    formatShare(condition.same_top_p),
  ],
};

export const QUANT_CLI: CliKind = { columns: QUANT_COLUMNS, lines: qualityLines };
