import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GpuSample } from '../../src/shared/contract/telemetry';
import { readAmdSmiDocument } from '../../src/main/telemetry/amd-smi-parse';
import { AmdGpuSampler } from '../../src/main/telemetry/amd-smi-sampler';
import { JsonDocumentSplitter } from '../../src/main/telemetry/json-stream';

const captured = (name: string) =>
  fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'captured', 'amd-smi', name), 'utf8').split('# ---\n')[1]!;
const standIn = path.join(__dirname, '..', 'fixtures', 'nvidia-smi', 'amd-bin', 'amd-smi');

/** What amd-smi's output yields as it would be streamed: in arbitrary chunks, elements of an open list as they complete. */
function streamed(text: string): unknown[] {
  const documents: unknown[] = [];
  const splitter = new JsonDocumentSplitter((document) => documents.push(document), undefined, true);
  for (let i = 0; i < text.length; i += 7) splitter.write(text.slice(i, i + 7));
  return documents;
}

/** The JSON value after the first `"key":` in a capture cut off before its end (a section that is itself complete). */
function capturedSection(text: string, key: string): unknown {
  const at = text.indexOf(`"${key}":`);
  if (at < 0) throw new Error(`no "${key}" in the capture`);
  let value: unknown = undefined;
  const splitter = new JsonDocumentSplitter((document) => (value ??= document));
  const rest = text.slice(at + key.length + 3).trimStart();
  if (rest.startsWith('"')) return JSON.parse(rest.slice(0, rest.indexOf('"', 1) + 1));
  splitter.write(rest);
  if (value === undefined) throw new Error(`"${key}" is not complete in the capture`);
  return value;
}

describe('amd-smi metric --json, captured', () => {
  it('the older list shape (RX 6600, whole output): every figure, no note', () => {
    const documents = streamed(captured('metric-json-list-rx6600-proxmox-full.json.txt'));
    expect(documents).toHaveLength(1);
    const { samples, notes } = readAmdSmiDocument(documents[0], 5);
    expect(samples).toEqual([
      expect.objectContaining({
        t: 5,
        index: 0,
        memoryUsedMib: 202,
        memoryTotalMib: 8176,
        utilizationPct: 1,
        memoryUtilizationPct: 0,
        temperatureC: 36,
        powerW: 6,
      }),
    ]);
    expect(notes).toEqual([]);
  });

  it('an APU in watch mode: "usage" is the string "N/A" and socket_power "N/A"; each gap is named, never a silent null', () => {
    const text = captured('metric-watch-json-strix-halo-usage-na-excerpt.json.txt');
    // The excerpt breaks off inside the element, so the stream yields nothing yet; its complete sections are read alone.
    expect(streamed(text)).toEqual([]);
    const entry = { gpu: 0, usage: capturedSection(text, 'usage'), power: capturedSection(text, 'power') };
    expect(entry.usage).toBe('N/A');
    const { samples, notes } = readAmdSmiDocument([entry], 0);
    expect(samples[0]).toMatchObject({ index: 0, utilizationPct: null, powerW: null, memoryUsedMib: null });
    expect(notes).toEqual([
      'GPU 0: amd-smi printed no mem_usage section, so no VRAM reading',
      'GPU 0: amd-smi reports usage as "N/A", so no utilization',
      'GPU 0: amd-smi reports power.socket_power as "N/A", so no power or energy',
    ]);
  });

  it('the gpu_data shape (amd-smi 26: 2× R9700, RX 7900 XTX) and the older list (W7700) read gfx_activity per GPU', () => {
    const r9700 = captured('metric-json-gpu-data-2xr9700-rocm7.2-head40.json.txt');
    const [first, second] = r9700.split('\n\n');
    for (const [text, index, busy] of [
      [first!, 0, 100],
      [second!, 1, 100],
      [captured('metric-json-gpu-data-usage-rx7900xtx-excerpt.json.txt'), 0, 2],
    ] as const) {
      const gpu = Number(/"gpu": (\d+)/.exec(text)![1]);
      const document = { gpu_data: [{ gpu, usage: { gfx_activity: capturedSection(text, 'gfx_activity') } }] };
      expect(readAmdSmiDocument(document, 0).samples).toEqual([expect.objectContaining({ index, utilizationPct: busy })]);
    }
    const w7700 = captured('metric-json-list-usage-w7700-excerpt.json.txt');
    const activity = capturedSection(w7700, 'gfx_activity');
    expect(readAmdSmiDocument([{ gpu: 0, usage: { gfx_activity: activity } }], 0).samples[0]!.utilizationPct).toBe(
      (activity as { value: number }).value,
    );
  });

  it("amd-smi 7.1.1's watch mode prints only its banner: no document", () => {
    expect(streamed(captured('metric-watch-json-7.1.1-banner-only.json.txt'))).toEqual([]);
  });

  it('an entry without a GPU index is numbered by its place, and says so; a figure as a bare number or numeric string counts', () => {
    const { samples, notes } = readAmdSmiDocument(
      { gpu_data: [{ usage: { gfx_activity: 40 } }, { gpu: '3', usage: { gfx_activity: '7' } }] },
      0,
    );
    expect(samples.map((sample) => [sample.index, sample.utilizationPct])).toEqual([
      [0, 40],
      [3, 7],
    ]);
    expect(notes).toContain('amd-smi named no GPU index for an entry; numbered 0 by its place in the output');
  });
});

describe('AmdGpuSampler against the amd-smi stand-in (constructed output)', () => {
  let sampler: AmdGpuSampler | null = null;
  afterEach(async () => {
    await sampler?.stop();
    sampler = null;
    delete process.env.FAKE_AMD_WATCH;
  });

  async function sampleFor(ms: number, watchSilenceMs = 5000): Promise<{ samples: GpuSample[]; sampler: AmdGpuSampler }> {
    const origin = performance.now();
    const samples: GpuSample[] = [];
    sampler = new AmdGpuSampler(
      standIn,
      () => performance.now() - origin,
      (sample) => samples.push(sample),
      watchSilenceMs,
      300,
    );
    sampler.start();
    const deadline = performance.now() + ms;
    while (performance.now() < deadline && samples.length < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    return { samples, sampler };
  }

  it('reads a watch mode that keeps one list open, element by element, before the list ends', async () => {
    process.env.FAKE_AMD_WATCH = 'list';
    const { samples, sampler: running } = await sampleFor(8000);
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples[0]).toMatchObject({ index: 0, memoryUsedMib: 3100, utilizationPct: 73, powerW: 180 });
    // One GPU: every element is its own pass.
    expect(new Set(samples.map((sample) => sample.sweep)).size).toBe(samples.length);
    expect([...running.notes]).toEqual([]);
  });

  it('falls back to one amd-smi metric --json per interval when watch mode prints only its banner, and says so', async () => {
    process.env.FAKE_AMD_WATCH = 'banner-only';
    const { samples, sampler: running } = await sampleFor(8000, 500);
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples[0]).toMatchObject({ index: 0, memoryUsedMib: 3100, powerW: 180 });
    expect([...running.notes]).toEqual([
      'amd-smi metric --watch --json printed no JSON in 0.5 s (as amd-smi 7.1.1 does); read with amd-smi metric --json once every 0.3 s instead, one process start per reading',
    ]);
    expect(running.failure).toBeNull();
  });
});
