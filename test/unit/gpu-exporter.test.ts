import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { parseGpuExporterMetrics } from '../../src/main/telemetry/gpu-exporter-parse';
import { GpuExporterSampler } from '../../src/main/telemetry/gpu-exporter-sampler';
import { collectedReadings, exporterWindow } from '../../src/main/telemetry/exporter-window';
import type { GpuSample } from '../../src/shared/contract/telemetry';
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
    // Periodic scrapes land at about 0, 1 and 2 s. The baseline, counted from start(), ends after the
    // second (at exactly 1 s the two would race), and a window from 1.2 s to 1.5 s holds none of them.
    await session.idleBaseline(1100);
    await delay(1200 - (performance.now() - started));
    session.markWindowStart();
    await delay(windowMs);
    session.markWindowEnd();
    await session.stop();
    return session.summary();
  }

  /** The measured window's length as notes print it, from the summary itself: a loaded machine stretches it. */
  const windowSeconds = (summary: Awaited<ReturnType<typeof shortRun>>) =>
    ((summary.window!.end_ms! - summary.window!.start_ms!) / 1000).toFixed(2);

  it('a page that changes on every scrape: the close of a short window is a sample of it, the opening (which may predate it) is not', async () => {
    const url = await exporter((scrape) => `${dcgm(0, 4000 + scrape, 60 + scrape)}\n`);
    const summary = await shortRun(url, 300);
    expect(summary.gpu).toMatchObject({ baseline_samples: 2, peak_used_mib: expect.any(Number) });
    // The opening read's page may have been collected after the read before it, before the window:
    // only pages first read after the opening are the window's (the close; a periodic read too, on a slow machine).
    expect(summary.gpu!.samples).toBeGreaterThanOrEqual(1);
    expect(summary.gpu!.power_w_mean).toBeGreaterThan(61);
    // Every read showed a new page, so nothing says the exporter is slower than the reads.
    expect(summary.gpu!.sampling_notes ?? []).toEqual([]);
    expect(summary.energy?.source).toBe('dcgm-exporter power');
  });

  it('says so in the summary when the measured window holds no GPU sample, with the last error', async () => {
    // Answers the two baseline scrapes, then fails: the window's edges get no reading.
    const url = await exporter((scrape) => (scrape < 2 ? `${dcgm(0, 4000, 60)}\n` : { status: 503, text: 'exporter restarting' }));
    const summary = await shortRun(url, 300);
    // The two baseline pages are one collection read twice.
    expect(summary.gpu).toMatchObject({ samples: 0, baseline_samples: 1, power_w_mean: null, utilization_pct_mean: null });
    const noSample = `no GPU sample fell inside the ${windowSeconds(summary)} s measured window (sampled every 1000 ms; the last reading failed: HTTP 503): its utilization, power and peak memory are unknown`;
    const notes = summary.gpu!.sampling_notes ?? [];
    expect(notes).toContain(noSample);
    // The unchanged baseline page also says the exporter collects less often than a second, where the window was shorter.
    for (const note of notes.filter((note) => note !== noSample)) expect(note).toMatch(/it cannot resolve the \d+\.\d\d s measured window/);
    expect(telemetryLines(summary)).toContain(`GPU telemetry: ${noSample}`);
  });

  describe("an exporter's page is its last collection, not a reading taken now", () => {
    /** The stand-in's time: the page it serves depends on it, and the sampler reads the run clock from it. */
    let now = 0;
    /** A constructed dcgm-exporter that collects every 3 s of `now` (read every 1 s, its page changes every third read). */
    const everyThreeSeconds = (stamp?: (collectedAt: number) => number) => (): string => {
      const collectedAt = Math.floor(now / 3000) * 3000 - 400;
      const page = dcgm(0, 4000 + collectedAt / 100, 70 + collectedAt / 1000);
      return stamp ? `${page.replace(/\n/g, ` ${stamp(collectedAt)}\n`)} ${stamp(collectedAt)}\n` : `${page}\n`;
    };
    const WALL_AT_ZERO = 1_760_000_000_000;

    async function readAt(url: string, times: number[]) {
      const samples: GpuSample[] = [];
      now = times[0]!;
      const sampler = new GpuExporterSampler(
        url,
        () => now,
        1000,
        (sample) => samples.push(sample),
        undefined,
        WALL_AT_ZERO + now,
      );
      for (const t of times) {
        now = t;
        await sampler.scrape(t);
      }
      const sweeps = [...new Set(samples.map((sample) => sample.sweep))].map((sweep) => {
        const own = samples.filter((sample) => sample.sweep === sweep);
        return { t: own[0]!.t, samples: own };
      });
      return { samples, sweeps, cadence: sampler.cadence };
    }

    const secondsFrom0 = (first: number, last: number) => Array.from({ length: (last - first) / 1000 + 1 }, (_, i) => first + i * 1000);

    it("what tells two collections apart: any GPU series, read or not, in any order; not the exporter's own series", () => {
      const fingerprint = (text: string) => parseGpuExporterMetrics(text, 0).page.fingerprint;
      const base = dcgm(0, 4000, 70);
      const energy = (mj: number) => `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{${labels(0)}} ${mj}`;
      const own = (requests: number) => `promhttp_metric_handler_requests_total{code="200"} ${requests}\ngo_goroutines ${requests + 10}`;
      // The figures read here held still, but the GPU's energy counter moved: a new collection.
      expect(fingerprint(`${base}\n${energy(1000)}\n`)).not.toBe(fingerprint(`${base}\n${energy(1070)}\n`));
      // Only the exporter's own counters moved (they do on every scrape): the same collection.
      expect(fingerprint(`${base}\n${own(1)}\n`)).toBe(fingerprint(`${base}\n${own(2)}\n`));
      // dcgm-exporter writes its families in map order, which can differ between scrapes.
      expect(fingerprint(`${base.split('\n').reverse().join('\n')}\n`)).toBe(fingerprint(`${base}\n`));
      // Timestamps are part of a collection; the page is stamped only where every GPU series is.
      const stamped = parseGpuExporterMetrics(`${base.replace(/\n/g, ' 1700000000500\n')} 1700000000900\n`, 0).page;
      expect(stamped.stampMs).toEqual({ earliest: 1700000000500, latest: 1700000000900 });
      expect(parseGpuExporterMetrics(`${base.replace('\n', ' 1700000000500\n')}\n`, 0).page.stampMs).toBeNull();
    });

    it('a page identical to the read before is the same collection again, dated after the read before the one that first showed it', async () => {
      const url = await exporter(everyThreeSeconds());
      const { samples, cadence } = await readAt(url, secondsFrom0(0, 8000));
      expect(samples.map((sample) => [sample.t, sample.collection])).toEqual([
        [0, { id: 1, earliest: null, latest: 0, stamped: false, repeat: false }],
        [1000, { id: 1, earliest: null, latest: 0, stamped: false, repeat: true }],
        [2000, { id: 1, earliest: null, latest: 0, stamped: false, repeat: true }],
        [3000, { id: 2, earliest: 2000, latest: 3000, stamped: false, repeat: false }],
        [4000, { id: 2, earliest: 2000, latest: 3000, stamped: false, repeat: true }],
        [5000, { id: 2, earliest: 2000, latest: 3000, stamped: false, repeat: true }],
        [6000, { id: 3, earliest: 5000, latest: 6000, stamped: false, repeat: false }],
        [7000, { id: 3, earliest: 5000, latest: 6000, stamped: false, repeat: true }],
        [8000, { id: 3, earliest: 5000, latest: 6000, stamped: false, repeat: true }],
      ]);
      // The gap from the 2nd to the 3rd collection; the 1st was only first read at 0, not collected then.
      expect(cadence).toEqual({ reads: 9, collections: 3, unchangedMs: 2000, everyMs: 3000, timestampsRefused: 0 });
    });

    it('a long window counts each collection taken inside it once, and none of its repeats', async () => {
      const url = await exporter(everyThreeSeconds());
      // Read every second, and at the window's opening (2.5 s) and close (9 s).
      const { sweeps, cadence } = await readAt(url, [0, 1000, 2000, 2500, ...secondsFrom0(3000, 9000)]);
      const window = exporterWindow(sweeps, { start: 2500, end: 9000 }, cadence, 'dcgm-exporter');
      // Eight reads fall in the window; three pages were new in it, each first read after the opening read.
      expect(sweeps.filter((sweep) => sweep.t >= 2500 && sweep.t <= 9000)).toHaveLength(8);
      expect(window.inside.map((sweep) => [sweep.t, sweep.samples[0]!.memoryUsedMib])).toEqual([
        [3000, 4026],
        [6000, 4056],
        [9000, 4086],
      ]);
      expect(window.figures).toBe(window.inside);
      expect(window.notes).toEqual([]);
    });

    it('a window shorter than the refresh: the figures are the last collection, with how much older than the window it can be', async () => {
      const url = await exporter(everyThreeSeconds());
      // The window opens at 3.2 s and closes at 3.5 s; the page it reads first appeared at 3 s, after the read at 2 s.
      const { sweeps, cadence } = await readAt(url, [0, 1000, 2000, 3000, 3200, 3500]);
      const window = exporterWindow(sweeps, { start: 3200, end: 3500 }, cadence, 'dcgm-exporter');
      expect(window.inside).toEqual([]);
      // Kept, once: the page both edges read.
      expect(window.figures.map((sweep) => [sweep.t, sweep.samples[0]!.memoryUsedMib])).toEqual([[3200, 4026]]);
      expect(window.notes).toEqual([
        "GPU figures are dcgm-exporter's last collection, not samples inside the 0.30 s measured window: taken up to 1.20 s before it opened",
        "dcgm-exporter's page did not change for 2.00 s while it was read, so it collects less often than that: it cannot resolve the 0.30 s measured window; dcgm-exporter collects every 30 s unless started with -c <ms> (DCGM_EXPORTER_INTERVAL)",
      ]);
    });

    it('once the refresh is measured, a window shorter than it is said to be beyond this exporter', async () => {
      const url = await exporter(everyThreeSeconds());
      const { sweeps, cadence } = await readAt(url, [...secondsFrom0(0, 9000), 9100, 9600]);
      expect(cadence).toMatchObject({ collections: 4, everyMs: 3000 });
      const window = exporterWindow(sweeps, { start: 9100, end: 9600 }, cadence, 'dcgm-exporter');
      expect(window.inside).toEqual([]);
      expect(window.notes).toEqual([
        "GPU figures are dcgm-exporter's last collection, not samples inside the 0.50 s measured window: taken up to 1.10 s before it opened",
        'dcgm-exporter collects about every 3.00 s (4 collections in 12 reads of its page): it cannot resolve the 0.50 s measured window; dcgm-exporter collects every 30 s unless started with -c <ms> (DCGM_EXPORTER_INTERVAL)',
      ]);
    });

    it('a page that changes on every read: the page first read at the opening may predate the window, the next is inside it', async () => {
      const url = await exporter(() => `${dcgm(0, 4000 + now, 60)}\n`);
      const { sweeps, cadence } = await readAt(url, [0, 1000, 1200, 1500]);
      const window = exporterWindow(sweeps, { start: 1200, end: 1500 }, cadence, 'dcgm-exporter');
      expect(window.inside.map((sweep) => sweep.t)).toEqual([1500]);
      // No page was read twice: the gaps between new pages are only the reads' spacing, no refresh to speak of.
      expect(cadence).toMatchObject({ reads: 4, collections: 4, unchangedMs: 0, everyMs: null });
      expect(window.notes).toEqual([]);
    });

    it("the exporter's own timestamps date each collection: a page first read inside the window but stamped before it is not the window's", async () => {
      const url = await exporter(everyThreeSeconds((collectedAt) => WALL_AT_ZERO + collectedAt));
      const { samples, sweeps, cadence } = await readAt(url, [...secondsFrom0(0, 5000), 5800, 6000, 6500]);
      expect(samples.find((sample) => sample.t === 6000)!.collection).toEqual({
        id: 3,
        earliest: 5600,
        latest: 5600,
        stamped: true,
        repeat: false,
      });
      // Stamped gaps count from the first collection on.
      expect(cadence).toMatchObject({ collections: 3, everyMs: 3000, timestampsRefused: 0 });
      // Read-based bounds would have put the page first read at 6 s (after the opening read at 5.8 s) inside the window.
      const short = exporterWindow(sweeps, { start: 5800, end: 6500 }, cadence, 'dcgm-exporter');
      expect(short.inside).toEqual([]);
      // Its figures are the two collections its reads showed: the opening read's, stamped 2.6 s, and the one stamped 5.6 s.
      expect(short.figures.map((sweep) => sweep.samples[0]!.collection!.latest)).toEqual([2600, 5600]);
      expect(short.notes[0]).toBe(
        "GPU figures are dcgm-exporter's last collection, not samples inside the 0.70 s measured window: taken up to 3.20 s before it opened",
      );
      expect(short.notes[1]).toMatch(/^dcgm-exporter collects about every 3\.00 s .*it cannot resolve the 0\.70 s measured window/);
      // A window that holds the stamps holds those collections, dated by their stamps for its energy.
      const long = exporterWindow(sweeps, { start: 2000, end: 6500 }, cadence, 'dcgm-exporter');
      expect(long.inside.map((sweep) => sweep.samples[0]!.collection!.latest)).toEqual([2600, 5600]);
      expect(collectedReadings(long.inside).map((sample) => [sample.t, sample.powerW])).toEqual([
        [2600, 72.6],
        [5600, 75.6],
      ]);
    });

    it("timestamps ahead of this machine's clock are another clock's: the reads date the page, and a note says so", async () => {
      const url = await exporter(everyThreeSeconds((collectedAt) => WALL_AT_ZERO + collectedAt + 3_600_000));
      const { samples, sweeps, cadence } = await readAt(url, secondsFrom0(0, 4000));
      expect(samples.find((sample) => sample.t === 3000)!.collection).toMatchObject({ earliest: 2000, latest: 3000, stamped: false });
      expect(cadence.timestampsRefused).toBe(2);
      expect(exporterWindow(sweeps, { start: 0, end: 4000 }, cadence, 'dcgm-exporter').notes).toContain(
        "2 of dcgm-exporter's pages carried timestamps ahead of this machine's clock (another clock or time zone): their collection times come from the reads instead",
      );
    });

    it('a captured page served unchanged through a short run (dcgm-exporter between its 30 s collections): figures kept and labelled, no sample counted', async () => {
      const captured = page('dcgm-exporter/metrics-l40s-595.58.03-default-counters.prom');
      const summary = await shortRun(await exporter(() => captured), 300);
      expect(summary.gpu).toMatchObject({
        samples: 0,
        baseline_samples: 1,
        power_w_mean: 35.686,
        utilization_pct_mean: 0,
        peak_used_mib: 0,
      });
      const seconds = windowSeconds(summary);
      expect(summary.gpu!.sampling_notes).toEqual([
        expect.stringMatching(
          new RegExp(
            `^GPU figures are dcgm-exporter's last collection, not samples inside the ${seconds.replace('.', '\\.')} s measured window: taken at least \\d+\\.\\d\\d s before it opened \\(how much earlier is unknown: it was the first page read\\)$`,
          ),
        ),
        expect.stringMatching(
          new RegExp(
            `^dcgm-exporter's page did not change for \\d+\\.\\d\\d s while it was read, so it collects less often than that: it cannot resolve the ${seconds.replace('.', '\\.')} s measured window; dcgm-exporter collects every 30 s`,
          ),
        ),
      ]);
      // One power reading of one collection is no energy over the window.
      expect(summary.energy).toMatchObject({ source: 'dcgm-exporter power', joules: null });
    });
  });

  it('takes only an http(s) URL, naming the field', () => {
    const spec = demoRunSpec();
    expect(checkRunShape({ ...spec, gpuMetricsUrl: 'http://gpu-box:9400/metrics' }).gpuMetricsUrl).toBe('http://gpu-box:9400/metrics');
    for (const bad of ['file:///etc/passwd', 'gpu-box:9400', 'not a url'])
      expect(() => checkRunShape({ ...spec, gpuMetricsUrl: bad }), bad).toThrow(/gpuMetricsUrl must be an http\(s\) URL/);
    expect(() => checkRunShape({ ...spec, metricsUrl: 'file:///etc/passwd' })).toThrow(/metricsUrl must be an http\(s\) URL/);
  });
});
