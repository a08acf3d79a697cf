import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseGpuExporterMetrics } from '../../src/main/telemetry/gpu-exporter-parse';
import { GpuExporterSampler } from '../../src/main/telemetry/gpu-exporter-sampler';
import { GpuSampler } from '../../src/main/telemetry/gpu-sampler';
import { TelemetrySession } from '../../src/main/telemetry/telemetry-session';
import { telemetryLines } from '../../src/main/cli/summary-table';
import { checkRunShape } from '../../src/main/services/run-spec';
import { capturedFiles, readCaptured } from '../support/captured';
import { demoRunSpec } from '../support/specs';

/** A captured page as the exporter served it: a pasted shell prompt (`$ curl ...`) is not part of the page. */
const page = (relative: string) =>
  readCaptured(relative)
    .split('\n')
    .filter((line) => !line.startsWith('$ '))
    .join('\n');

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A real HTTP server answering every GET with what `body` returns (a different page per scrape, if it likes). */
async function exporter(body: (scrape: number) => string | { status: number; text: string }): Promise<string> {
  let scrapes = 0;
  const server = http.createServer((_request, response) => {
    const answer = body(scrapes++);
    const { status, text } = typeof answer === 'string' ? { status: 200, text: answer } : answer;
    response.writeHead(status, { 'content-type': 'text/plain; version=0.0.4' });
    response.end(text);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}/metrics`;
}

describe('captured GPU exporter pages', () => {
  it('every captured dcgm-exporter page parses and names its GPUs', () => {
    for (const file of capturedFiles('dcgm-exporter')) {
      const { kind, readings } = parseGpuExporterMetrics(page(file), 0);
      expect(kind, file).toBe('dcgm-exporter');
      expect(readings.length, file).toBeGreaterThan(0);
      for (const reading of readings) expect(reading.sample.name, file).toMatch(/\S/);
    }
  });

  it('L40S with the default counters: memory total is used + free + reserved, with power, clocks and temperature', () => {
    const { readings } = parseGpuExporterMetrics(page('dcgm-exporter/metrics-l40s-595.58.03-default-counters.prom'), 0);
    expect(readings).toHaveLength(1);
    expect(readings[0]).toMatchObject({
      host: 'gpu1-wl8sg',
      sample: {
        name: 'NVIDIA L40S',
        uuid: 'GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43',
        memoryUsedMib: 0,
        // 0 + 45459 free + 608 reserved (nvidia-smi gives an L40S 46068 MiB).
        memoryTotalMib: 46067,
        utilizationPct: 0,
        memoryUtilizationPct: 0,
        powerW: 35.686,
        smClockMhz: 210,
        memClockMhz: 405,
        temperatureC: 32,
      },
    });
  });

  it('4× GB200 sampled without HELP or TYPE lines: four GPUs, free memory as the total where no reserve is listed', () => {
    const { readings } = parseGpuExporterMetrics(page('dcgm-exporter/metrics-4xgb200-580.126.20-sampled-no-help.prom'), 0);
    expect(readings.map((reading) => reading.sample.name)).toEqual(Array(4).fill('NVIDIA GB200'));
    expect(readings[0]!.sample).toMatchObject({ memoryUsedMib: 0, memoryTotalMib: 188729, utilizationPct: 0 });
  });

  it("8× A800 with GPU 0 in three MIG slices: ten devices, the GPU's power counted once", () => {
    const { readings } = parseGpuExporterMetrics(page('dcgm-exporter/metrics-8xa800-sxm4-mig-2g20gb-535.129.03.prom'), 0);
    expect(readings).toHaveLength(10);
    const slices = readings.filter((reading) => reading.sample.name === 'NVIDIA A800-SXM4-80GB MIG 2g.20gb');
    expect(slices).toHaveLength(3);
    expect(slices.map((slice) => slice.sample.memoryUsedMib)).toEqual([10, 10, 10]);
    // Each slice repeats the GPU's power (78.2 W): kept on the first only.
    expect(slices.map((slice) => slice.sample.powerW)).toEqual([78.174, null, null]);
    const gpu1 = readings.find((reading) => reading.key === 'msxf-hpc-64-35-ai/1/')!;
    expect(gpu1.sample).toMatchObject({
      name: 'NVIDIA A800-SXM4-80GB',
      memoryUsedMib: 2,
      memoryTotalMib: 81228,
      powerW: 55.942,
      smClockMhz: 210,
    });
  });

  it('A30 MIG with an empty HELP line: the throttle reasons bitmask per slice', () => {
    const { readings } = parseGpuExporterMetrics(page('dcgm-exporter/metrics-a30-mig-clock-throttle-reasons-empty-help.prom'), 0);
    expect(readings.map((reading) => [reading.sample.name, reading.sample.throttleReasons])).toEqual([
      ['NVIDIA A30 MIG 1g.6gb', 1],
      ['NVIDIA A30 MIG 1g.6gb', 1],
    ]);
  });

  it("AMD device-metrics-exporter excerpts: used VRAM of the RX 7900 XTX, and every excerpt read as AMD's", () => {
    const { kind, readings } = parseGpuExporterMetrics(
      page('amd-device-metrics-exporter/metrics-rx7900xtx-docker-used-vram-excerpt.prom'),
      0,
    );
    expect(kind).toBe('amd-device-metrics-exporter');
    expect(readings).toHaveLength(1);
    // card_model is empty in this capture: no name rather than an empty one.
    expect(readings[0]).toMatchObject({ host: 'cb76105c40d0', sample: { memoryUsedMib: 26, name: null } });
    for (const file of capturedFiles('amd-device-metrics-exporter'))
      expect(() => parseGpuExporterMetrics(page(file), 0), file).not.toThrow();
  });

  it('4× V100 (Hostname label): the utilization of GPU 0 on its host', () => {
    const { readings } = parseGpuExporterMetrics(page('dcgm-exporter/metrics-4xV100-sxm2-hostname-label.prom'), 5);
    const gpu0 = readings.find((reading) => reading.key === 'r6i3n0/0/');
    expect(gpu0).toMatchObject({
      host: 'r6i3n0',
      sample: { t: 5, name: 'Tesla V100-SXM2-32GB', uuid: 'GPU-a6158b59-2c1e-1e63-0068-9178c4298abd', utilizationPct: 0 },
    });
    // A power limit is no power reading.
    expect(readings.every((reading) => reading.sample.powerW === null)).toBe(true);
  });

  it('H100 MIG: each instance is a device named after its profile; GR_ENGINE_ACTIVE (a ratio) stands in for utilization', () => {
    const { readings } = parseGpuExporterMetrics(page('dcgm-exporter/metrics-h100-mig-driver-version-label.prom'), 0);
    expect(readings.map((reading) => reading.key)).toEqual(['gsrh100-074/0/7', 'gsrh100-074/0/8', 'gsrh100-074/0/9']);
    expect(readings[0]!.sample).toMatchObject({ name: 'NVIDIA H100 80GB HBM3 MIG 1g.10gb', utilizationPct: 0 });
  });

  it('RTX 2000 Ada beside an A30 MIG slice (lowercase hostname, pod labels): free memory per device, no used memory invented', () => {
    const { readings } = parseGpuExporterMetrics(page('dcgm-exporter/metrics-mixed-rtx2000ada-a30-mig-pod-labels.prom'), 0);
    const ada = readings.find((reading) => reading.sample.name === 'NVIDIA RTX 2000 Ada Generation')!;
    expect(ada).toMatchObject({ host: 'dcgm-exporter-wwwjh', sample: { memoryUsedMib: null, memoryTotalMib: null } });
    expect(readings.some((reading) => reading.sample.name === 'NVIDIA A30 MIG 1g.6gb')).toBe(true);
  });
});

describe('GPU exporter pages (constructed) for what the captures lack', () => {
  const labels = (gpu: number) => `gpu="${gpu}",UUID="GPU-${gpu}",device="nvidia${gpu}",modelName="NVIDIA L4",Hostname="node-a"`;
  const dcgm = (gpu: number, used: number, power: number) =>
    [
      `DCGM_FI_DEV_FB_USED{${labels(gpu)}} ${used}`,
      `DCGM_FI_DEV_FB_FREE{${labels(gpu)}} ${22000 - used}`,
      `DCGM_FI_DEV_FB_RESERVED{${labels(gpu)}} 563`,
      `DCGM_FI_DEV_GPU_UTIL{${labels(gpu)}} 97`,
      `DCGM_FI_DEV_POWER_USAGE{${labels(gpu)}} ${power}`,
      `DCGM_FI_DEV_SM_CLOCK{${labels(gpu)}} 2040`,
      `DCGM_FI_DEV_MEM_CLOCK{${labels(gpu)}} 6250`,
      `DCGM_FI_DEV_CLOCKS_EVENT_REASONS{${labels(gpu)}} 4`,
    ].join('\n');

  it('takes total memory as used + free + reserved, and the clocks event reasons as the throttle bitmask', () => {
    const { readings } = parseGpuExporterMetrics(dcgm(0, 15000, 71.5), 0);
    expect(readings[0]!.sample).toMatchObject({
      memoryUsedMib: 15000,
      memoryTotalMib: 22563,
      utilizationPct: 97,
      powerW: 71.5,
      smClockMhz: 2040,
      memClockMhz: 6250,
      throttleReasons: 4,
    });
  });

  it("reads AMD's device-metrics-exporter with or without its name prefix (gpu_id, gpu_partition_id, serial_number labels)", () => {
    // Names and labels as the exporter's source registers them; values constructed (no captured page found).
    const amd = (prefix: string) =>
      [
        `${prefix}gpu_used_vram{gpu_id="0",gpu_partition_id="0",serial_number="PCB-1",card_model="AMD Instinct MI300X",hostname="mi-node"} 4096`,
        `${prefix}gpu_total_vram{gpu_id="0",gpu_partition_id="0",serial_number="PCB-1",card_model="AMD Instinct MI300X",hostname="mi-node"} 196592`,
        `${prefix}gpu_gfx_activity{gpu_id="0",gpu_partition_id="0",serial_number="PCB-1",card_model="AMD Instinct MI300X",hostname="mi-node"} 88`,
        `${prefix}gpu_package_power{gpu_id="0",gpu_partition_id="0",serial_number="PCB-1",card_model="AMD Instinct MI300X",hostname="mi-node"} 612`,
      ].join('\n');
    for (const prefix of ['', 'amd_']) {
      const { kind, readings } = parseGpuExporterMetrics(amd(prefix), 0);
      expect(kind).toBe('amd-device-metrics-exporter');
      expect(readings).toHaveLength(1);
      expect(readings[0]).toMatchObject({
        key: 'mi-node/0/0',
        host: 'mi-node',
        sample: {
          name: 'AMD Instinct MI300X',
          uuid: 'PCB-1',
          memoryUsedMib: 4096,
          memoryTotalMib: 196592,
          utilizationPct: 88,
          powerW: 612,
        },
      });
    }
    // A name that only contains the ending is not one of them.
    expect(parseGpuExporterMetrics('my_gpu_used_vram_bytes{gpu_id="0"} 1\n', 0).readings).toEqual([]);
  });

  it('scrapes a real HTTP exporter on the run clock: one sweep per scrape, each GPU keeping its index', async () => {
    const url = await exporter((scrape) => (scrape === 0 ? dcgm(1, 1000, 20) : `${dcgm(0, 500, 30)}\n${dcgm(1, 9000, 70)}`));
    let now = 100;
    const sampler = new GpuSampler(() => now, 250, null, Number.POSITIVE_INFINITY, url);
    sampler.start();
    await expect.poll(() => sampler.samples.length).toBe(1);
    now = 1100;
    await expect.poll(() => sampler.samples.length, { timeout: 5000 }).toBe(3);
    await sampler.stop();
    // GPU 1 was seen first, so it keeps index 0 whatever order later pages list it in.
    expect(sampler.samples.map((sample) => [sample.sweep, sample.index, sample.memoryUsedMib, sample.t])).toEqual([
      [1, 0, 1000, 100],
      [2, 1, 500, 1100],
      [2, 0, 9000, 1100],
    ]);
    expect(sampler.hostOf(0)).toBe('node-a');
    expect(sampler.powerSource).toBe('dcgm-exporter power');
    expect(sampler.unavailableReason).toBeNull();
  });

  it('says why when the exporter answers an error, a page without GPU series, or a page over the size limit', async () => {
    const refusing = new GpuExporterSampler(
      await exporter(() => ({ status: 503, text: 'down' })),
      () => 0,
      1000,
      () => {},
    );
    await refusing.scrape();
    expect(refusing.failure).toMatch(/GPU exporter at http:\/\/127\.0\.0\.1:\d+\/metrics failed: HTTP 503/);

    const unrelated = new GpuExporterSampler(
      await exporter(() => 'node_load1 0.5\n'),
      () => 0,
      1000,
      () => {},
    );
    await unrelated.scrape();
    expect(unrelated.failure).toMatch(/lists no GPU memory, utilization or power series/);

    const received: unknown[] = [];
    const huge = new GpuExporterSampler(
      await exporter(() => `# ${'x'.repeat(4096)}\n`.repeat(64)),
      () => 0,
      1000,
      (sample) => received.push(sample),
      64 * 1024,
    );
    await huge.scrape();
    expect(huge.failure).toMatch(/over the 65536-byte limit|passed the 65536-byte limit/);
    expect(received).toHaveLength(0);
  });

  /** A run's telemetry against `url` with a measured window of `windowMs` that starts between two periodic scrapes. */
  async function shortRun(url: string, windowMs: number) {
    const started = performance.now();
    const session = new TelemetrySession({
      clock: () => performance.now() - started,
      serverPid: null,
      metricsUrl: null,
      gpuMetricsUrl: url,
    });
    session.start();
    await session.idleBaseline(1000);
    // Periodic scrapes land at about 0, 1 and 2 s: a window from 1.2 s to 1.5 s holds none of them.
    await delay(1200 - (performance.now() - started));
    session.markWindowStart();
    await delay(windowMs);
    session.markWindowEnd();
    await session.stop();
    return session.summary();
  }

  it('a run shorter than the exporter interval still gets a reading at each edge of its window', async () => {
    const url = await exporter((scrape) => `${dcgm(0, 4000 + scrape, 60 + scrape)}\n`);
    const summary = await shortRun(url, 300);
    expect(summary.gpu).toMatchObject({ samples: 2, baseline_samples: 2, peak_used_mib: expect.any(Number) });
    expect(summary.gpu!.power_w_mean).toBeGreaterThan(60);
    expect(summary.gpu!.sampling_notes ?? []).toEqual([]);
    expect(summary.energy?.source).toBe('dcgm-exporter power');
  });

  it('says so in the summary when the measured window holds no GPU sample, with the last error', async () => {
    // Answers the two baseline scrapes, then fails: the window's edges get no reading.
    const url = await exporter((scrape) => (scrape < 2 ? `${dcgm(0, 4000, 60)}\n` : { status: 503, text: 'exporter restarting' }));
    const summary = await shortRun(url, 300);
    expect(summary.gpu).toMatchObject({ samples: 0, baseline_samples: 2, power_w_mean: null, utilization_pct_mean: null });
    expect(summary.gpu!.sampling_notes).toEqual([
      expect.stringMatching(
        /^no GPU sample fell inside the 0\.3\d s measured window \(sampled every 1000 ms; the last reading failed: HTTP 503.*\): its utilization, power and peak memory are unknown$/,
      ),
    ]);
    expect(telemetryLines(summary)).toContainEqual(
      expect.stringMatching(/^GPU telemetry: no GPU sample fell inside the 0\.3\d s measured window/),
    );
  });

  it('takes only an http(s) URL, naming the field', () => {
    const spec = demoRunSpec();
    expect(checkRunShape({ ...spec, gpuMetricsUrl: 'http://gpu-box:9400/metrics' }).gpuMetricsUrl).toBe('http://gpu-box:9400/metrics');
    for (const bad of ['file:///etc/passwd', 'gpu-box:9400', 'not a url'])
      expect(() => checkRunShape({ ...spec, gpuMetricsUrl: bad }), bad).toThrow(/gpuMetricsUrl must be an http\(s\) URL/);
    expect(() => checkRunShape({ ...spec, metricsUrl: 'file:///etc/passwd' })).toThrow(/metricsUrl must be an http\(s\) URL/);
  });
});
