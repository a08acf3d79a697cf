import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ImageLogReader } from '../../src/main/engines/llamacpp/log-images';
import { imagesSummary } from '../../src/main/metrics/images-summary';
import { imagesLine } from '../../src/shared/images-line';

/** A captured log's lines after its header (test/fixtures/captured/README.md). */
function captured(name: string): string[] {
  const text = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'captured', 'llama-image-logs', name), 'utf8');
  return text.slice(text.indexOf('# ---\n') + '# ---\n'.length).split('\n');
}

const read = (lines: readonly string[]) => {
  const reader = new ImageLogReader();
  for (const line of lines) reader.read(line);
  return reader.figures();
};

describe("what llama-server's log says of the pictures it was shown", () => {
  it('times each encode by the log lines around it and counts each picture tokens and decode (captured, the pinned build)', () => {
    const lines = captured('cpu-2026-image-trace-pinned-80fb11a-demo-projector.log');
    const figures = read(lines);
    // 0.00.898.823 encoding → 0.01.043.839 decoding: 145.016 ms; then 106.653 and 24.967 ms.
    expect(figures.encodesMs.map((value) => Number(value.toFixed(3)))).toEqual([145.016, 106.653, 24.967]);
    expect(figures.images).toEqual([
      { tokens: 16, decodeMs: 21, batches: 1 },
      { tokens: 16, decodeMs: 7, batches: 1 },
      { tokens: 16, decodeMs: 5, batches: 1 },
    ]);
    // The server's own count agrees: each picture's request has 16 tokens more than its text.
    const own = lines.flatMap((line) => {
      const match = /tokens: text = (\d+), total = (\d+)/.exec(line);
      return match && match[1] !== match[2] ? [Number(match[2]) - Number(match[1])] : [];
    });
    expect(own).toEqual(figures.images.map((image) => image.tokens));
    const summary = imagesSummary(figures)!;
    expect(summary).toMatchObject({ images: 3, image_tokens: 48, tokens_per_image: { mean: 16, min: 16, max: 16 }, encodes: 3 });
    expect(summary.image_encode_ms!.p50).toBeCloseTo(106.653, 3);
    expect(summary.image_decode_ms!.p50).toBe(7);
    expect(imagesLine(summary)).toBe(
      "images: 3 decoded into the model, 16 tokens each (48 in all), decode p50 7.0 ms each; encoder p50 106.7 ms over 3 encodes (max 145.0 ms); from llama-server's log (its trace level, or an older build's own encode line), measured requests only",
    );
    // A summary stored before warm-up pictures were left out says that it holds them.
    const { measured_window_only: _, ...stored } = summary;
    expect(imagesLine(stored)).toMatch(/, warm-up requests included$/);
  });

  it("leaves out the pictures finished before the measured window opened, the warm-up's (captured lines, the mark placed after the first picture)", () => {
    const lines = captured('cpu-2026-image-trace-pinned-80fb11a-demo-projector.log');
    const firstDecoded = lines.findIndex((line) => line.includes('image decoded (batch 1/1)'));
    const reader = new ImageLogReader();
    for (const line of lines.slice(0, firstDecoded + 1)) reader.read(line);
    reader.markWindowStart();
    for (const line of lines.slice(firstDecoded + 1)) reader.read(line);
    const figures = reader.figures();
    expect(figures.encodesMs.map((value) => Number(value.toFixed(3)))).toEqual([106.653, 24.967]);
    expect(figures.images).toEqual([
      { tokens: 16, decodeMs: 7, batches: 1 },
      { tokens: 16, decodeMs: 5, batches: 1 },
    ]);
    // A picture whose encode began before the mark and whose decoding ends after it counts with the window.
    const straddling = new ImageLogReader();
    straddling.read('0.01.000.000 I slot process_mtmd: id  0 | task 3 | encoding mtmd batch from idx = 9, n_chunks = 1');
    straddling.markWindowStart();
    straddling.read('0.01.100.000 I decoding image batch 1/1, n_tokens_batch = 16');
    straddling.read('0.01.110.000 I image decoded (batch 1/1) in 10 ms');
    expect(straddling.figures()).toEqual({ encodesMs: [100], images: [{ tokens: 16, decodeMs: 10, batches: 1 }] });
  });

  it("takes an older build's own encode time, and leaves out a picture whose decoding the log does not finish (captured)", () => {
    const figures = read(captured('apple-2025-image-slice-encoded-qwen2.5-vl.log'));
    expect(figures).toEqual({ encodesMs: [24194], images: [] });
    const summary = imagesSummary(figures)!;
    expect(summary).toMatchObject({ images: 0, image_tokens: 0, tokens_per_image: null, encodes: 1, image_decode_ms: null });
    expect(summary.image_encode_ms!.p50).toBe(24194);
    expect(imagesLine(summary)).toMatch(/^images: none decoded into the model; encoder p50 24194\.0 ms over 1 encode \(max/);
  });

  it('counts every picture of a batch the server encoded at once, across their decode batches (constructed)', () => {
    const figures = read([
      '1.02.000.000 I slot process_mtmd: id  1 | task 7 | encoding mtmd batch from idx = 5, n_chunks = 2',
      '1.02.250.500 I decoding image batch 1/2, n_tokens_batch = 512',
      '1.02.300.000 I image decoded (batch 1/2) in 50 ms',
      '1.02.300.100 I decoding image batch 2/2, n_tokens_batch = 64',
      '1.02.310.000 I image decoded (batch 2/2) in 10 ms',
      // The second picture of the batch: no second encode.
      '1.02.310.100 I decoding image batch 1/1, n_tokens_batch = 256',
      '1.02.340.000 I image decoded (batch 1/1) in 30 ms',
      // Noise: a decoded line with no picture open, an audio encode, a line quoting the words mid-text.
      '1.03.000.000 I image decoded (batch 1/1) in 99 ms',
      'audio slice encoded in 40 ms',
      'srv  log_server_r: request: "decoding image batch soon"',
    ]);
    expect(figures.encodesMs).toEqual([250.5]);
    expect(figures.images).toEqual([
      { tokens: 576, decodeMs: 60, batches: 2 },
      { tokens: 256, decodeMs: 30, batches: 1 },
    ]);
    expect(imagesLine(imagesSummary(figures))).toMatch(/^images: 2 decoded into the model, 256–576 tokens \(mean 416\.0\) \(832 in all\)/);
    // Without timestamps, the pinned build's encode cannot be timed: pictures are counted, the encoder is not.
    const untimed = read([
      'x encoding mtmd batch from idx = 1, n_chunks = 1',
      'decoding image batch 1/1, n_tokens_batch = 16',
      'image decoded (batch 1/1) in 3 ms',
    ]);
    expect(untimed).toEqual({ encodesMs: [], images: [{ tokens: 16, decodeMs: 3, batches: 1 }] });
    expect(imagesSummary({ encodesMs: [], images: [] })).toBeNull();
    expect(imagesLine(null)).toMatch(/said nothing of them/);
  });
});
