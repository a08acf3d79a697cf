import { clientLoadLine, shardsLine } from '../../shared/client-load-line';
import { gpuChoiceLine } from '../../shared/gpu-choice-line';
import { gpuContextNote, offloadLine } from '../../shared/gpu-offload';
import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import { bandwidthLine, energyLine, throttleLine } from '../../shared/energy-bandwidth-lines';
import type { Distribution, RunSummary, SpeculativeSummary } from '../../shared/contract/runs';
import { embeddingsLine } from '../../shared/embeddings-line';
import { imagesLine } from '../../shared/images-line';
import { toolCallsLine } from '../../shared/tool-calls-line';
import { columnLabel, columnsShownIn, distributionColumns, distributionRows, rateFigures } from '../../shared/metric-columns';
import type { Statistic } from '../../shared/metric-table';
import { formatMs, formatNumber, formatPercentile, formatShare, formatTable } from './format';

function distributionCell(d: Distribution, statistic: Statistic): string {
  if (statistic === 'n') return String(d.n);
  if (statistic === 'p90' || statistic === 'p95' || statistic === 'p99') return formatPercentile(d, statistic);
  return statistic === 'rate' ? '' : formatMs(d[statistic]);
}

/**
 * The run's distributions as the terminal shows them: a row per metric the metric table shows
 * in the terminal (`shows.cli`) and the summary holds, a column per statistic.
 */
export function distributionTable(summary: RunSummary): string[][] {
  const statistics = distributionColumns('cli');
  return [
    ['metric', ...statistics],
    ...distributionRows(summary, 'cli').map(({ name, distribution, statistics: shown }) => [
      name,
      ...statistics.map((statistic) => (shown.includes(statistic) ? distributionCell(distribution, statistic) : '')),
    ]),
  ];
}

/** The rates the metric table shows in the terminal, over the measured window. */
export function throughputLine(summary: RunSummary): string {
  const figures = rateFigures(summary, 'cli').map(
    ({ definition, value }) => `${formatNumber(value, definition.digits)} ${definition.label}`,
  );
  return `throughput: ${figures.join(', ')} over ${formatMs(summary.measurement.window_ms)}`;
}

/** Speculative decoding: the pooled acceptance and how it spread over requests. */
export function speculativeLine(speculative: SpeculativeSummary): string {
  const perRequest = speculative.acceptance_rate_per_request;
  return `speculative decoding: ${speculative.accepted_tokens} of ${speculative.drafted_tokens} drafted tokens accepted (${formatShare(speculative.acceptance_rate)}); per request mean ${formatShare(perRequest.mean)}, p50 ${formatShare(perRequest.p50)}, min ${formatShare(perRequest.min)} over ${speculative.requests_with_draft} requests${speculative.requests_without_draft ? `, ${speculative.requests_without_draft} drafted nothing` : ''}`;
}

/** Per conversation turn: as the history grows, prompt tokens rise and the server's cache should cover the shared part. */
export function turnTable(turns: NonNullable<RunSummary['turns']>): string {
  // The latency columns are those the metric table shows per turn (`shows.perTurn`).
  const columns = columnsShownIn('perTurn');
  return formatTable([
    [
      'turn',
      'requests',
      'failed',
      ...columns.map(({ metric, statistic }) => columnLabel(metric, statistic)),
      'prompt tokens',
      'cached tokens',
      'cached share',
    ],
    ...turns.map((turn) => [
      String(turn.turn),
      String(turn.requests),
      String(turn.failed),
      ...columns.map(({ metric, statistic }) => distributionCell(turn[metric], statistic)),
      formatNumber(turn.prompt_tokens_mean),
      formatNumber(turn.cached_tokens_mean),
      turn.cached_share === null ? '—' : `${(turn.cached_share * 100).toFixed(0)} %`,
    ]),
  ]);
}

/** The telemetry taken during the run: the GPU, the server process, energy, throttling, the sampler's cost, competition. */
export function telemetryLines(telemetry: RunSummary['telemetry'], offload?: RunSummary['gpu_offload']): string[] {
  const lines: string[] = [];
  if (!telemetry) return lines;
  const gpu = telemetry.gpu;
  const context = gpu ? gpuContextNote(offload) : null;
  lines.push(
    gpu
      ? `GPU ${gpu.name}${context ? ` (${context})` : ''}: VRAM ${gpu.before_load_used_mib == null ? '' : `before load ${gpu.before_load_used_mib.toFixed(0)} MiB, `}baseline ${gpu.baseline_used_mib?.toFixed(0) ?? '—'} MiB, peak ${gpu.peak_used_mib?.toFixed(0) ?? '—'} MiB (server ${gpu.server_used_mib_peak?.toFixed(0) ?? '—'} MiB), utilization ${formatNumber(gpu.utilization_pct_mean)} %, power ${formatNumber(gpu.power_w_mean)} W${gpu.other_processes_vram_mib ? `; other processes held ${gpu.other_processes_vram_mib} MiB` : ''}`
      : `GPU: no GPU telemetry (${telemetry.gpu_unavailable_reason})`,
  );
  const choice = gpu && gpuChoiceLine(gpu);
  if (choice) lines.push(choice);
  for (const note of gpu?.sampling_notes ?? []) lines.push(`GPU telemetry: ${note}`);
  if (telemetry.server_process)
    lines.push(
      `server process: CPU ${formatNumber(telemetry.server_process.cpu_pct_mean)} % mean, RSS peak ${telemetry.server_process.rss_peak_bytes === null ? '—' : `${(telemetry.server_process.rss_peak_bytes / 2 ** 20).toFixed(0)} MiB`}`,
    );
  if (telemetry.server_metrics)
    lines.push(
      `server counters: ${telemetry.server_metrics.prompt_tokens ?? '—'} prompt tokens (${telemetry.server_metrics.cached_prompt_tokens ?? '—'} from cache), ${telemetry.server_metrics.predicted_tokens ?? '—'} predicted`,
    );
  for (const line of [energyLine(telemetry.energy), throttleLine(telemetry.throttle)]) if (line) lines.push(line);
  lines.push(`sampler: every ${telemetry.sampler.interval_ms} ms, ${telemetry.sampler.cpu_pct.toFixed(2)} % of one core`);
  const contention = telemetry.contention;
  if (contention?.contaminated) lines.push(`CONTAMINATED: ${contention.reason}`);
  else if (contention && contention.other_cpu_cores_mean !== null)
    lines.push(
      `competition: other processes ${contention.other_cpu_cores_mean.toFixed(2)} CPU cores on average (contaminated above ${contention.threshold_cpu_cores})`,
    );
  return lines;
}

/** Where the run's figures need a second look: offload, bandwidth, delivery, load, steady state, small samples. */
function runNotes(summary: RunSummary): string[] {
  const lines: string[] = [];
  const u = summary.measurement.unsupported_percentiles;
  const offload = offloadLine(summary.gpu_offload);
  if (offload) lines.push(offload);
  if (summary.gpu_offload?.warning) lines.push(summary.gpu_offload.warning);
  const bandwidth = bandwidthLine(summary.decode_bandwidth);
  if (bandwidth) lines.push(bandwidth);
  if (summary.delivery?.warning) lines.push(summary.delivery.warning);
  if (summary.load.note) lines.push(`NOTE: ${summary.load.note}`);
  const steady = summary.load.steady_state;
  if (steady?.trending)
    lines.push(
      `NOT STEADY: throughput changed ${formatNumber((steady.change ?? 0) * 100, 0)} % between the window's halves (${steady.first_half} → ${steady.second_half} completions, p ${steady.p_value!.toPrecision(2)}): the window mixes a ramp with the steady state; lengthen the warmup or the run`,
    );
  else if (steady && steady.p_value !== null)
    lines.push(
      `steady state: ${steady.first_half} and ${steady.second_half} completions in the window's halves (p ${steady.p_value.toPrecision(2)}): no trend in throughput`,
    );
  if (Object.keys(u).length > 0)
    lines.push(
      `n too small: p90 needs n ≥ ${PERCENTILE_MIN_N.p90}, p95 n ≥ ${PERCENTILE_MIN_N.p95}, p99 n ≥ ${PERCENTILE_MIN_N.p99} (docs/METRICS.md)`,
    );
  return lines;
}

export function printSummary(summary: RunSummary): void {
  const r = summary.requests;
  const lines = [
    `run ${summary.run_id}  ${summary.status}${summary.status_reason ? ` (${summary.status_reason})` : ''}`,
    `workload ${summary.workload.name} @ ${summary.workload.revision?.slice(0, 12)}`,
    `requests: ${r.attempted} attempted, ${r.completed} completed, ${r.failed} failed${
      Object.keys(r.failures_by_class).length
        ? ` (${Object.entries(r.failures_by_class)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')})`
        : ''
    }, ${r.accepted} accepted (${r.checked} checked); warmup ${summary.warmup_requests} excluded`,
    '',
    formatTable(distributionTable(summary)),
    ...(summary.measurement?.slot_wait_note ? [`client_overhead_ms: ${summary.measurement.slot_wait_note}`] : []),
    ...(summary.turns ? ['', turnTable(summary.turns)] : []),
    ...(summary.reasoning
      ? [
          `reasoning: ${summary.reasoning.requests_with_reasoning} requests, ${summary.reasoning.tokens.n ? `${formatNumber(summary.reasoning.tokens.mean)} tokens mean (server tokenizer)` : 'tokens not counted'}${summary.reasoning.tokens_uncounted ? `; ${summary.reasoning.tokens_uncounted} uncounted: ${summary.reasoning.tokens_uncounted_reason}` : ''}`,
        ]
      : []),
    ...(summary.speculative ? [speculativeLine(summary.speculative)] : []),
    ...(summary.tool_calls ? [toolCallsLine(summary.tool_calls)] : []),
    '',
    throughputLine(summary),
    ...(summary.embeddings ? [embeddingsLine(summary.embeddings)] : []),
    ...(summary.rerank ? [embeddingsLine(summary.rerank, 'rerank')] : []),
    ...(summary.images !== undefined ? [imagesLine(summary.images)] : []),
    `goodput: ${formatNumber(summary.goodput.requests_per_s, 2)} req/s (${summary.goodput.fraction === null ? '—' : `${(summary.goodput.fraction * 100).toFixed(1)}%`} of attempted${summary.goodput.slo ? `, SLO ${JSON.stringify(summary.goodput.slo)}` : ', no SLO'}); accepted-task rate ${summary.accepted_rate === null ? '—' : `${(summary.accepted_rate * 100).toFixed(1)}%`}`,
    `load: ${summary.load.mode}${summary.load.mode === 'closed' ? (summary.turns ? ` ${summary.load.concurrency} concurrent users (conversations)` : ` concurrency ${summary.load.concurrency}`) : ` offered ${summary.load.offered} ${summary.turns ? 'conversations' : 'req/s'}, ${summary.load.slip_ms_p99 === null ? `max slip ${formatMs(summary.load.slip_ms_max)} (p99: n too small)` : `p99 slip ${formatMs(summary.load.slip_ms_p99)}`}`}, achieved ${formatNumber(summary.load.achieved, 2)} req/s`,
    ...(summary.load.client ? [clientLoadLine(summary.load.client)] : []),
    ...(summary.load.client && shardsLine(summary.load.client) ? [shardsLine(summary.load.client)!] : []),
  ];
  lines.push(...telemetryLines(summary.telemetry, summary.gpu_offload));
  lines.push(...runNotes(summary));
  lines.push(
    'Latencies are over successful requests; queue_ms is an estimate (TTFT minus server prefill); client_overhead_ms includes any wait for a free server slot.',
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
