// Every test here sets the PATH its sampler reads (a stand-in of its own, or none), so the GPU the machine has,
// or the stand-in the other server tests see (test/support/gpu-on-path.ts), changes nothing.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { inferlab, startInferlab } from '../support/cli';
import { machineReport } from '../support/machine';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const standInDir = path.join(projectRoot(), 'test', 'fixtures', 'nvidia-smi', 'bin');
const withStandIn = (extra: NodeJS.ProcessEnv = {}) => ({ PATH: `${standInDir}:${process.env.PATH}`, ...extra });

function standInsRunning(): number {
  let count = 0;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(standInDir)) count += 1;
    } catch {
      // Process ended while scanning.
    }
  }
  return count;
}

// Runs that read GPU samples stop by duration, not request count: how many samples land in
// the measured window must not depend on how fast this machine answers.
describe('telemetry on a run', () => {
  it('reports gpu: null with the reason, plus real process and server metrics; predicted tokens match the run', async () => {
    const dir = tempDir();
    const db = path.join(dir, 't.db');
    // A PATH with no nvidia-smi or amd-smi on it: GPU telemetry is absent whatever the machine has.
    const result = await inferlab(
      [
        'run',
        '--workload',
        'chat-short',
        '--model',
        'demo:q8_0',
        '--requests',
        '10',
        '--warmup',
        '2',
        '--concurrency',
        '2',
        '--force',
        '--db',
        db,
        '--json',
      ],
      // Without the suite's faster interval (empty is unset): the default is what this test pins.
      { PATH: tempDir(), INFERLAB_TELEMETRY_INTERVAL_MS: '' },
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    const telemetry = summary.telemetry;
    expect(telemetry.gpu).toBeNull();
    expect(telemetry.gpu_unavailable_reason).toMatch(/neither nvidia-smi, amd-smi nor ioreg found/);
    expect(telemetry.server_process.cpu_pct_mean).toBeGreaterThan(0);
    expect(telemetry.server_process.rss_peak_bytes).toBeGreaterThan(10 * 2 ** 20);
    await inferlab(['export', summary.run_id, '--out', path.join(dir, 'export'), '--db', db]);
    const requests = fs
      .readFileSync(path.join(dir, 'export', 'requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const measuredOutputTokens = requests.filter((request) => !request.warmup).reduce((sum, request) => sum + request.output_tokens, 0);
    expect(requests.filter((request) => request.warmup)).toHaveLength(2);
    // The window opens after warmup: the server's counters over it hold the measured requests only.
    expect(telemetry.server_metrics.predicted_tokens).toBe(measuredOutputTokens);
    expect(telemetry.sampler.interval_ms).toBe(250);
    // No GPU tool, so no idle baseline to wait for: the window opens after the two warmup requests.
    expect(telemetry.window.baseline_ms).toBe(0);
    expect(telemetry.window.start_ms).toBeGreaterThan(0);
    expect(telemetry.contention).toMatchObject({
      threshold_cpu_cores: 0.5,
      contaminated: expect.any(Boolean),
      samples: expect.any(Number),
    });
    // Without a GPU, energy comes from RAPL where this machine exposes it, else null with the reason.
    if (telemetry.energy.source === 'rapl') expect(telemetry.energy.joules).toBeGreaterThan(0);
    else expect(telemetry.energy).toMatchObject({ joules: null, reason: expect.stringMatching(/RAPL/) });
    expect(telemetry.throttle.throttled).toBeNull();
    // The engine decides where decoding runs, not the PATH: a CPU engine reads every weight
    // against what the server's threads can read; a GPU engine's run is never called a CPU one.
    if ((await machineReport()).engineBackend === 'cpu') {
      expect(summary.decode_bandwidth).toMatchObject({ placement: 'cpu', reason: null, peak: { kind: 'cpu probe' } });
      expect(summary.decode_bandwidth.effective_gb_per_s).toBeGreaterThan(0);
      expect(summary.decode_bandwidth.peak.label).toMatch(/^reachable with \d+ threads?$/);
    } else expect(summary.decode_bandwidth.placement).not.toBe('cpu');
  });

  it('with the constructed-output nvidia-smi stand-in, GPU figures equal the fixture and no sampler outlives the run', async () => {
    const db = path.join(tempDir(), 'gpu.db');
    const result = await inferlab(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--duration', '2', '--force', '--db', db, '--json'],
      withStandIn({ INFERLAB_TELEMETRY_INTERVAL_MS: '100' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const gpu = JSON.parse(result.stdout).telemetry.gpu;
    expect(gpu).toMatchObject({
      name: 'NVIDIA GeForce RTX 4090',
      memory_total_mib: 24564,
      baseline_used_mib: 5120,
      peak_used_mib: 5120,
      server_used_mib_peak: 812,
      utilization_pct_mean: 87,
      power_w_mean: 250.5,
      other_processes_vram_mib: 300,
    });
    expect(gpu.samples).toBeGreaterThan(0);
    // The fixture's constant 250.5 W over the span its readings cover; clocks as recorded, nothing slowing them.
    const summary = JSON.parse(result.stdout);
    const { energy, throttle } = summary.telemetry;
    expect(energy.source).toBe('nvidia-smi power.draw');
    expect(energy.joules).toBeCloseTo((250.5 * energy.covered_ms) / 1000, 6);
    // Energy per request follows where the engine ran: a CPU engine's tokens are not the GPU's work.
    if (summary.gpu_offload.state === 'none')
      expect(energy).toMatchObject({ context_only: true, joules_per_request: null, reason: expect.stringMatching(/^not this run's: /) });
    else expect(energy.joules_per_request).toBeGreaterThan(0);
    expect(throttle).toMatchObject({ throttled: false, reasons: [], share_of_samples: 0, mem_clock_mhz_mean: 10501 });
    // The interval INFERLAB_TELEMETRY_INTERVAL_MS asked for, and a baseline of four of its readings rather than a second.
    expect(summary.telemetry.sampler.interval_ms).toBe(100);
    expect(summary.telemetry.window.baseline_ms).toBeGreaterThanOrEqual(400);
    expect(summary.telemetry.window.baseline_ms).toBeLessThan(1000);
    expect(standInsRunning()).toBe(0);
  });

  it("records the GPUs' used memory before the server was spawned, and places readings by nvidia-smi's timestamps", async () => {
    const db = path.join(tempDir(), 'live.db');
    const result = await inferlab(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--duration', '3', '--warmup', '1', '--force', '--db', db, '--json'],
      withStandIn({ FAKE_SMI_GPU_FILE: 'one-gpu-live.csv', FAKE_SMI_APPS_FILE: 'compute-apps-named.csv', FAKE_SMI_DELAY_MS: '300' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const gpu = JSON.parse(result.stdout).telemetry.gpu;
    expect(gpu).toMatchObject({
      before_load_used_mib: 4308,
      baseline_used_mib: 5120,
      peak_used_mib: 5120,
      server_used_mib_peak: 812,
      other_processes_vram_mib: 300,
      gpu_count: 1,
    });
    expect(gpu.timestamps.device).toBeGreaterThan(0);
    expect(gpu.timestamps.arrival).toBe(0);
    expect(standInsRunning()).toBe(0);
  });

  it('with a stand-in whose memory rises every reading, the peak is later and higher than the baseline, not the other way round', async () => {
    const db = path.join(tempDir(), 'ramp.db');
    const result = await inferlab(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--duration', '3', '--force', '--db', db, '--json'],
      withStandIn({ FAKE_SMI_GPU_FILE: 'one-gpu-live.csv', FAKE_SMI_RAMP_MIB: '4' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const gpu = JSON.parse(result.stdout).telemetry.gpu;
    // The baseline is read before the window opens and the peak at its end, at least 3 s (12 readings at 4 Hz) later.
    expect(gpu.peak_used_mib - gpu.baseline_used_mib).toBeGreaterThanOrEqual(12 * 4);
    expect(gpu.baseline_used_mib).toBeGreaterThan(gpu.before_load_used_mib);
    expect(standInsRunning()).toBe(0);
  });

  it('reports an NVML failure as the reason and keeps running; an interrupted run leaves no sampler behind', async () => {
    const db = path.join(tempDir(), 'nvml.db');
    const result = await inferlab(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--requests', '4', '--force', '--db', db, '--json'],
      withStandIn({ FAKE_SMI_MODE: 'nvml-failure' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const telemetry = JSON.parse(result.stdout).telemetry;
    expect(telemetry.gpu).toBeNull();
    expect(telemetry.gpu_unavailable_reason).toMatch(/Failed to initialize NVML/);

    const interrupted = startInferlab(
      ['run', '--workload', 'decode-heavy', '--model', 'demo:q4_k_m', '--requests', '100', '--force', '--db', db, '--json'],
      withStandIn(),
    );
    const exited = new Promise<number | null>((resolve) => interrupted.on('close', resolve));
    try {
      // A loaded machine can take many seconds to load the model and start sampling.
      for (let i = 0; i < 600 && standInsRunning() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(standInsRunning()).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 1500));
    } finally {
      // Stopped even when the wait fails: a run left going would hold its server and refuse the next tests' servers.
      interrupted.kill('SIGINT');
    }
    expect(await exited).toBe(130);
    expect(standInsRunning()).toBe(0);
  });

  it('samples an AMD GPU through the amd-smi stand-in when nvidia-smi is absent', { timeout: 240_000 }, async () => {
    const db = path.join(tempDir(), 'amd.db');
    const amdDir = path.join(projectRoot(), 'test', 'fixtures', 'nvidia-smi', 'amd-bin');
    // The stand-in's folder and node alone: a real nvidia-smi anywhere on the PATH (often /usr/bin) would be read first.
    const nodeOnly = tempDir();
    fs.symlinkSync(process.execPath, path.join(nodeOnly, 'node'));
    const result = await inferlab(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--duration', '3', '--force', '--db', db, '--json'],
      { PATH: `${amdDir}:${nodeOnly}` },
    );
    expect(result.code, result.stderr).toBe(0);
    const gpu = JSON.parse(result.stdout).telemetry.gpu;
    expect(gpu).toMatchObject({
      memory_total_mib: 65520,
      baseline_used_mib: 3100,
      peak_used_mib: 3100,
      utilization_pct_mean: 73,
      power_w_mean: 180,
    });
  });

  it(
    "reads the serving machine's GPUs from a GPU exporter (--gpu-metrics-url) instead of this machine's",
    { timeout: 240_000 },
    async () => {
      // A real HTTP server answering a constructed dcgm-exporter page: two L4s on host gpu-node-7,
      // the power rising once the run has begun. The nvidia-smi stand-in on the PATH must not be read.
      const page = (power: number) =>
        [0, 1]
          .flatMap((gpu) => {
            const labels = `gpu="${gpu}",UUID="GPU-${gpu}",device="nvidia${gpu}",modelName="NVIDIA L4",Hostname="gpu-node-7"`;
            return [
              `DCGM_FI_DEV_FB_USED{${labels}} ${gpu === 0 ? 9000 : 300}`,
              `DCGM_FI_DEV_FB_FREE{${labels}} ${gpu === 0 ? 13000 : 21700}`,
              `DCGM_FI_DEV_GPU_UTIL{${labels}} ${gpu === 0 ? 90 : 0}`,
              `DCGM_FI_DEV_POWER_USAGE{${labels}} ${gpu === 0 ? power : 16}`,
            ];
          })
          .join('\n');
      let scrapes = 0;
      const server = http.createServer((_request, response) => {
        scrapes += 1;
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end(`${page(60)}\n`);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
        const db = path.join(tempDir(), 'exporter.db');
        const result = await inferlab(
          ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--duration', '3', '--gpu-metrics-url', url, '--db', db, '--json'],
          withStandIn(),
        );
        expect(result.code, result.stderr).toBe(0);
        const telemetry = JSON.parse(result.stdout).telemetry;
        expect(telemetry.gpu).toMatchObject({
          name: '2× NVIDIA L4',
          gpu_count: 2,
          memory_total_mib: 44000,
          peak_used_mib: 9300,
          power_w_mean: 76,
          utilization_pct_mean: 45,
          sampling_failure: null,
        });
        expect(telemetry.gpu.per_gpu.map((gpu: { host: string }) => gpu.host)).toEqual(['gpu-node-7', 'gpu-node-7']);
        expect(telemetry.energy.source).toBe('dcgm-exporter power');
        expect(scrapes).toBeGreaterThanOrEqual(3);
        expect(standInsRunning()).toBe(0);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );

  it('restarts an nvidia-smi loop that dies', { timeout: 240_000 }, async () => {
    const db = path.join(tempDir(), 'restart.db');
    const result = await inferlab(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--duration', '4', '--force', '--db', db, '--json'],
      withStandIn({ FAKE_SMI_EXIT_AFTER: '3' }),
    );
    expect(result.code, result.stderr).toBe(0);
    const gpu = JSON.parse(result.stdout).telemetry.gpu;
    // Three samples per loop life; more than that in the window means the loop came back.
    expect(gpu.samples).toBeGreaterThan(3);
    expect(standInsRunning()).toBe(0);
  });
});
