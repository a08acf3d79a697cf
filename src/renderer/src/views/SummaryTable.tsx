import { clientLoadLine, shardsLine } from '../../../shared/client-load-line';
import { gpuChoiceLine } from '../../../shared/gpu-choice-line';
import { gpuContextNote, offloadLine } from '../../../shared/gpu-offload';
import type { Distribution, RunSummary } from '../../../shared/contract/runs';
import { bandwidthLine, energyLine, throttleLine } from '../../../shared/energy-bandwidth-lines';
import { PERCENTILE_MIN_N } from '../../../shared/experiment-defaults';
import { embeddingsLine } from '../../../shared/embeddings-line';
import { imagesLine } from '../../../shared/images-line';
import { toolCallsLine } from '../../../shared/tool-calls-line';
import { columnsShownIn, distributionColumns, distributionRows, headerLabel, rateFigures } from '../../../shared/metric-columns';
import type { Statistic } from '../../../shared/metric-table';
import { bytes, ms, num, pct, pctl } from '../components/format';
import { TableScroll } from '../components/TableScroll';

export function SummaryTable({ summary }: { summary: RunSummary }) {
  const gpu = summary.telemetry?.gpu;
  const gpuChoice = gpu ? gpuChoiceLine(gpu) : null;
  const gpuContext = gpu ? gpuContextNote(summary.gpu_offload) : null;
  return (
    <div className="summary" data-testid="run-summary">
      <p>
        <span className={`badge badge-${summary.status === 'completed' ? 'ok' : 'missing'}`}>{summary.status}</span> {summary.status_reason}{' '}
        {summary.requests.attempted} attempted, {summary.requests.completed} completed, {summary.requests.failed} failed,{' '}
        {summary.requests.accepted} accepted; warmup {summary.warmup_requests} excluded
      </p>
      <DistributionTable summary={summary} />
      <p>
        Throughput{' '}
        {rateFigures(summary, 'ui')
          .map(({ definition, value }) => num(value, definition.label, definition.digits))
          .join(', ')}{' '}
        · goodput {num(summary.goodput.requests_per_s, 'req/s', 2)} · accepted-task rate {pct(summary.accepted_rate)} · load{' '}
        {summary.load.mode}
        {summary.load.mode === 'closed'
          ? summary.turns
            ? `, ${summary.load.concurrency} concurrent users`
            : ` × ${summary.load.concurrency}`
          : ` ${summary.load.offered} req/s offered, ${summary.load.slip_ms_p99 === null ? `max slip ${ms(summary.load.slip_ms_max)} (p99: n too small)` : `p99 slip ${ms(summary.load.slip_ms_p99)}`}`}
      </p>
      {summary.load.client && <p data-testid="client-load">{clientLoadLine(summary.load.client)}</p>}
      {summary.load.client && shardsLine(summary.load.client) && <p data-testid="shard-load">{shardsLine(summary.load.client)}</p>}
      {summary.load.note && <p className="error">{summary.load.note}</p>}
      {summary.load.steady_state?.trending && (
        <p className="error" data-testid="not-steady">
          Not steady: throughput changed {num((summary.load.steady_state.change ?? 0) * 100, '%', 0)} between the window's halves (
          {summary.load.steady_state.first_half} → {summary.load.steady_state.second_half} completions): the window mixes a ramp with the
          steady state. Lengthen the warmup or the run.
        </p>
      )}
      {summary.measurement.slot_wait_note && <p>client_overhead_ms: {summary.measurement.slot_wait_note}</p>}
      {summary.turns && <TurnTable turns={summary.turns} />}
      {summary.embeddings && <p data-testid="embeddings">{embeddingsLine(summary.embeddings)}</p>}
      {summary.tool_calls && <p data-testid="tool-calls">{toolCallsLine(summary.tool_calls)}</p>}
      {summary.rerank && <p data-testid="rerank">{embeddingsLine(summary.rerank, 'rerank')}</p>}
      {summary.images !== undefined && <p data-testid="images">{imagesLine(summary.images)}</p>}
      {summary.speculative && (
        <p data-testid="speculative">
          Speculative decoding: {summary.speculative.accepted_tokens} of {summary.speculative.drafted_tokens} drafted tokens accepted (
          {pct(summary.speculative.acceptance_rate)}); per request mean {pct(summary.speculative.acceptance_rate_per_request.mean)}, p50{' '}
          {pct(summary.speculative.acceptance_rate_per_request.p50)}, min {pct(summary.speculative.acceptance_rate_per_request.min)} over{' '}
          {summary.speculative.requests_with_draft} requests
          {summary.speculative.requests_without_draft ? `, ${summary.speculative.requests_without_draft} drafted nothing` : ''}
        </p>
      )}
      {summary.telemetry && (
        <p>
          {gpu
            ? `GPU ${gpu.name}${gpuContext ? ` (${gpuContext})` : ''}: VRAM ${num(gpu.baseline_used_mib, 'MiB', 0)} baseline, ${num(gpu.peak_used_mib, 'MiB', 0)} peak (server ${num(gpu.server_used_mib_peak, 'MiB', 0)}), utilization ${num(gpu.utilization_pct_mean, '%')}`
            : `No GPU telemetry: ${summary.telemetry.gpu_unavailable_reason}`}
          {summary.telemetry.server_process &&
            ` · server CPU ${num(summary.telemetry.server_process.cpu_pct_mean, '%')}, RSS peak ${bytes(summary.telemetry.server_process.rss_peak_bytes)}`}
          {gpu?.sampling_notes?.map((note) => (
            <span key={note} data-testid="gpu-sampling-note">
              <br />
              GPU telemetry: {note}
            </span>
          ))}
          {gpuChoice && (
            <>
              <br />
              <span data-testid="gpu-choice">{gpuChoice}</span>
            </>
          )}
        </p>
      )}
      {summary.gpu_offload && (
        <p data-testid="run-offload" className={summary.gpu_offload.warning ? 'error' : undefined}>
          {offloadLine(summary.gpu_offload)}
          {summary.gpu_offload.warning && (
            <>
              <br />
              <strong>{summary.gpu_offload.warning}</strong>
            </>
          )}
        </p>
      )}
      {[energyLine(summary.telemetry?.energy), throttleLine(summary.telemetry?.throttle), bandwidthLine(summary.decode_bandwidth)].map(
        (line, index) =>
          line && (
            <p
              key={index}
              data-testid={['run-energy', 'run-throttle', 'run-bandwidth'][index]}
              className={line.startsWith('THROTTLED') ? 'error' : undefined}
            >
              {line}
            </p>
          ),
      )}
      {summary.delivery?.warning && (
        <p data-testid="run-delivery" className="error">
          <strong>{summary.delivery.warning}</strong>
        </p>
      )}
      <p>
        <small>
          Latencies over successful requests; percentiles by linear interpolation; “n too small”: p90 needs n ≥ {PERCENTILE_MIN_N.p90}, p95
          n ≥ {PERCENTILE_MIN_N.p95}, p99 n ≥ {PERCENTILE_MIN_N.p99}; queue_ms is an estimate; client_overhead_ms includes any wait for a
          free server slot.
        </small>
      </p>
    </div>
  );
}

function distributionCell(d: Distribution, statistic: Statistic): string | number {
  if (statistic === 'n') return d.n;
  if (statistic === 'p90' || statistic === 'p95' || statistic === 'p99') return pctl(d, statistic);
  return statistic === 'rate' ? '' : ms(d[statistic]);
}

/** The run's distributions: a row per metric the metric table shows in the app (`shows.ui`) and the summary holds. */
function DistributionTable({ summary }: { summary: RunSummary }) {
  const statistics = distributionColumns('ui');
  return (
    <TableScroll>
      <table>
        <thead>
          <tr>
            <th>Metric</th>
            {statistics.map((statistic) => (
              <th key={statistic}>{statistic}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {distributionRows(summary, 'ui').map(({ metric, name, distribution, statistics: shown }) => (
            <tr key={metric}>
              <th>{name}</th>
              {statistics.map((statistic) => (
                <td key={statistic}>{shown.includes(statistic) ? distributionCell(distribution, statistic) : ''}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}

/** Per conversation turn: the history grows, and the server's cache should cover more of it. */
function TurnTable({ turns }: { turns: NonNullable<RunSummary['turns']> }) {
  // The latency columns are those the metric table shows per turn (`shows.perTurn`).
  const columns = columnsShownIn('perTurn');
  return (
    <TableScroll>
      <table data-testid="turn-table">
        <caption>Per turn (conversations): prompt tokens grow with the history; cached tokens show the server reusing it</caption>
        <thead>
          <tr>
            <th>Turn</th>
            <th>Requests</th>
            <th>Failed</th>
            {columns.map(({ key, metric, statistic }) => (
              <th key={key}>{headerLabel(metric, statistic)}</th>
            ))}
            <th>Prompt tokens</th>
            <th>Cached tokens</th>
            <th>Cached share</th>
          </tr>
        </thead>
        <tbody>
          {turns.map((turn) => (
            <tr key={turn.turn}>
              <th>{turn.turn}</th>
              <td>{turn.requests}</td>
              <td>{turn.failed}</td>
              {columns.map(({ key, metric, statistic }) => (
                <td key={key}>{distributionCell(turn[metric], statistic)}</td>
              ))}
              <td>{num(turn.prompt_tokens_mean, '', 1)}</td>
              <td>{num(turn.cached_tokens_mean, '', 1)}</td>
              <td>{pct(turn.cached_share)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
