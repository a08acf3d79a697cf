// Prints the GPU check's table from run summaries given as BACKEND=FILE.json: one row per engine.
import fs from 'node:fs';

const fixed = (value, digits = 1) => (value === null || value === undefined ? '—' : Number(value).toFixed(digits));
const rows = [['backend', 'offload', 'TTFT p50 ms', 'TPOT p50 ms', 'VRAM peak MiB', 'power W', 'J/token', 'bandwidth share', 'tok/s']];
for (const argument of process.argv.slice(2)) {
  const [backend, file] = argument.split('=');
  const summary = JSON.parse(fs.readFileSync(file, 'utf8'));
  const gpu = summary.telemetry?.gpu ?? null;
  const offload = summary.gpu_offload;
  const bandwidth = summary.decode_bandwidth;
  rows.push([
    backend,
    offload
      ? `${offload.state}${offload.layers ? ` ${offload.layers.offloaded}/${offload.layers.total}` : ''}${offload.warning ? ' (MOSTLY HOST)' : ''}`
      : '—',
    fixed(summary.metrics.ttft_ms.p50, 2),
    fixed(summary.metrics.tpot_ms.p50, 3),
    fixed(gpu?.peak_used_mib, 0),
    // A CPU engine's row reads the GPU's draw as context only: it is not the run's energy.
    `${fixed(gpu?.power_w_mean, 0)}${summary.telemetry?.energy?.context_only ? ' (GPU, not the run)' : ''}`,
    summary.telemetry?.energy?.context_only ? '— (engine not on the GPU)' : fixed(summary.telemetry?.energy?.joules_per_output_token, 4),
    bandwidth?.utilization === null || bandwidth?.utilization === undefined
      ? `— (${bandwidth?.reason ?? bandwidth?.peak_reason ?? 'none'})`
      : `${fixed(bandwidth.utilization * 100, 0)} %`,
    fixed(summary.throughput.output_tokens_per_s, 0),
  ]);
}
if (rows.length === 1) console.log('gpu-check: no engine completed a run; see the setup logs');
const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
for (const row of rows)
  console.log(
    row
      .map((cell, column) => String(cell).padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );
