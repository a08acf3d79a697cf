import { useMemo } from 'react';
import type { ConditionResult, ExperimentResult } from '../../../shared/contract/experiments';
import { Chart } from '../components/Chart';
import { bytes, ms, num, pct } from '../components/format';
import { quantTradeoffOption } from './quant-tradeoff';
import type { KindColumns } from './result-parts';

/** Size against speed and quality, one point per quantization. */
export function QuantResult({ result }: { result: ExperimentResult }) {
  const option = useMemo(() => quantTradeoffOption(result), [result]);
  return option ? <Chart label="quant-tradeoff" option={option} height={300} /> : null;
}

export const QUANT_COLUMNS: KindColumns = {
  Headers: () => (
    <>
      <th>File</th>
      <th>Load</th>
      <th>VRAM peak</th>
      <th>Agreement</th>
      <th>KLD</th>
      <th>Same top token</th>
    </>
  ),
  Cells: ({ condition }: { condition: ConditionResult }) => (
    <>
      <td>{bytes(condition.file_bytes ?? null)}</td>
      <td>{ms(condition.load_ms ?? null)}</td>
      <td>{condition.vram?.peak_mib == null ? '— (no GPU telemetry)' : `${condition.vram.peak_mib} MiB`}</td>
      <td>{pct(condition.agreement_with_baseline ?? null)}</td>
      <td>{num(condition.kld_mean ?? null, '', 6)}</td>
      <td>{pct(condition.same_top_p ?? null)}</td>
    </>
  ),
};
