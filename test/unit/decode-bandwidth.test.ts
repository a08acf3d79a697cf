import fs from 'node:fs';
import path from 'node:path';
import { GGUFValueType } from '@huggingface/gguf';
import { describe, expect, it } from 'vitest';
import { lastLevelCacheBytes } from '../../src/main/telemetry/cpu-cache';
import { decodeBandwidth, decodeLoadOf } from '../../src/main/metrics/decode-bandwidth';
import { gpuPeakBandwidth } from '../../src/main/metrics/gpu-peak-bandwidth';
import { otherBusyCores, reachableMemoryRead, probeCacheKey } from '../../src/main/telemetry/memory-read-probe';
import { readDecodeFootprint, type DecodeFootprint } from '../../src/main/models/decode-footprint';
import { GgmlType, writeGgufFile, type GgufTensor } from '../../src/main/models/gguf-writer';
import { argvValue, runDecodeBandwidth } from '../../src/main/runner/run-bandwidth';
import { measuredRequest } from '../support/measured-request';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/**
 * A hand-made llama GGUF: 2 blocks, embedding 8, 2 heads (head_dim 4), 1 KV head; no
 * output.weight, so the output is tied to token_embd and a decode step streams it.
 *   token_embd [8 × 16] F16 = 256 bytes; blk.0/1.attn_q [8 × 8] F32 = 256 bytes each; output_norm [8] F32 = 32 bytes.
 */
function handMadeModel(): string {
  const file = path.join(tempDir(), 'tiny.gguf');
  const u32 = (key: string, value: number) => ({ key, type: GGUFValueType.UINT32 as const, value });
  const tensor = (name: string, shape: number[], type: GgmlType): GgufTensor => ({
    name,
    shape,
    type,
    data: () => new Uint8Array(shape.reduce((a, b) => a * b, 1) * (type === GgmlType.F32 ? 4 : 2)),
  });
  writeGgufFile(
    file,
    [
      { key: 'general.architecture', type: GGUFValueType.STRING, value: 'llama' },
      u32('llama.block_count', 2),
      u32('llama.embedding_length', 8),
      u32('llama.attention.head_count', 2),
      u32('llama.attention.head_count_kv', 1),
    ],
    [
      tensor('token_embd.weight', [8, 16], GgmlType.F16),
      tensor('blk.0.attn_q.weight', [8, 8], GgmlType.F32),
      tensor('blk.1.attn_q.weight', [8, 8], GgmlType.F32),
      tensor('output_norm.weight', [8], GgmlType.F32),
    ],
  );
  return file;
}

describe('decode bandwidth from a GGUF file and a run', () => {
  it('reads the weights a decode step streams and the KV shape', async () => {
    expect(await readDecodeFootprint(handMadeModel())).toEqual({
      architecture: 'llama',
      blockWeightBytes: 512,
      headWeightBytes: 32 + 256,
      embeddingLookupBytes: 0,
      nLayer: 2,
      nHeadKv: 1,
      headDimK: 4,
      headDimV: 4,
      unknownTypeTensors: [],
    });
  });

  it('equals the formula on a hand-computed case (CPU, f16 cache, one sequence)', async () => {
    const footprint = (await readDecodeFootprint(handMadeModel())) as DecodeFootprint;
    const result = decodeBandwidth({
      footprint,
      placement: { device: 'cpu' },
      kvCacheTypes: { k: 'f16', v: 'f16' },
      meanContextTokens: 100,
      decodeSequences: 1,
      tpotMsMean: 10,
      peak: { gb_per_s: 0.001, kind: 'cpu probe', label: 'reachable with 2 threads', source: 'test' },
      peakReason: null,
    });
    // Weights 800 B; KV per context token = 2 layers × 1 head × (4 × 2 B + 4 × 2 B) = 32 B, × 100 tokens = 3200 B.
    // 4000 B per step at 100 steps/s = 400 000 B/s = 0.0004 GB/s, 40 % of 0.001 GB/s.
    expect(result).toMatchObject({
      weight_bytes: 800,
      kv_bytes_per_sequence: 3200,
      bytes_per_step: 4000,
      bytes_per_token: 4000,
      decode_tokens_per_s: 100,
      reason: null,
    });
    expect(result.effective_gb_per_s).toBeCloseTo(0.0004, 12);
    expect(result.utilization).toBeCloseTo(0.4, 9);
  });

  it('counts only the offloaded layers on a GPU, per sequence KV for a batch, and the cache type size', async () => {
    const footprint = (await readDecodeFootprint(handMadeModel())) as DecodeFootprint;
    const result = decodeBandwidth({
      footprint,
      // llama.cpp: "offloaded 1/3 layers": one block on the GPU, the output stayed on the CPU.
      placement: { device: 'gpu', offloaded: 1, total: 3 },
      kvCacheTypes: { k: 'f16', v: 'q8_0' },
      meanContextTokens: 100,
      decodeSequences: 2,
      tpotMsMean: 20,
      peak: null,
      peakReason: 'not in the table',
    });
    // Weights 256 B; KV per token per layer = 4 × 2 + 4 × 34/32 = 12.25 B → 1225 B per sequence; 256 + 2 × 1225 = 2706 B per step.
    expect(result).toMatchObject({
      weight_bytes: 256,
      kv_bytes_per_sequence: 1225,
      bytes_per_step: 2706,
      bytes_per_token: 1353,
      decode_tokens_per_s: 100,
    });
    expect(result.effective_gb_per_s).toBeCloseTo((2706 * 50) / 1e9, 12);
    expect(result.utilization).toBeNull();
    expect(result.peak_reason).toBe('not in the table');
  });

  it('says when a CPU step reads little more than the last-level cache, where a share of the DRAM probe can pass 100 %', async () => {
    const footprint = (await readDecodeFootprint(handMadeModel())) as DecodeFootprint;
    const base = {
      footprint,
      kvCacheTypes: { k: 'f16', v: 'f16' },
      meanContextTokens: 0,
      decodeSequences: 1,
      tpotMsMean: 1,
      peak: null,
      peakReason: null,
    };
    const cpu = { ...base, placement: { device: 'cpu' as const } };
    const step = decodeBandwidth(cpu).bytes_per_step!;
    expect(step).toBeGreaterThan(0);
    expect(decodeBandwidth({ ...cpu, lastLevelCacheBytes: step / 4 + 1 }).cache_note).toMatch(
      /^the bytes read per step are under 4× this CPU's 0\.0 MiB last-level cache: .* can pass 100 %$/,
    );
    expect(decodeBandwidth({ ...cpu, lastLevelCacheBytes: step / 4 }).cache_note).toBeNull();
    expect(decodeBandwidth({ ...cpu, lastLevelCacheBytes: null }).cache_note).toBeNull();
    // A share past 100 % is explained wherever it happens: on a machine that reports no cache size (many
    // virtual machines), and where the step is far larger than the cache it reports.
    const effective = decodeBandwidth(cpu).effective_gb_per_s!;
    const probe = (gbPerS: number) => ({
      gb_per_s: gbPerS,
      kind: 'cpu probe' as const,
      label: 'reachable with 2 threads',
      source: 'constructed',
    });
    for (const cacheBytes of [null, step / 4]) {
      const past = decodeBandwidth({ ...cpu, lastLevelCacheBytes: cacheBytes, peak: probe(effective / 1.11) });
      expect(past.utilization).toBeCloseTo(1.11, 6);
      expect(past.cache_note).toMatch(/^the share passes 100 %: part of each step was read from the CPU's caches/);
      expect(past.cache_note!.endsWith('(this machine does not report its cache size)')).toBe(cacheBytes === null);
      expect(decodeBandwidth({ ...cpu, lastLevelCacheBytes: cacheBytes, peak: probe(effective) }).cache_note).toBeNull();
    }
    // A GPU's weights are not in the CPU's cache.
    expect(
      decodeBandwidth({ ...base, placement: { device: 'gpu', offloaded: 3, total: 3 }, lastLevelCacheBytes: 2 ** 30 }).cache_note,
    ).toBeNull();
  });

  it('reads the last-level cache from sysfs: the highest level, data or unified, never instruction', () => {
    const dir = tempDir();
    const cache = (index: number, level: number, type: string, size: string) => {
      fs.mkdirSync(path.join(dir, `index${index}`));
      for (const [file, text] of Object.entries({ level: String(level), type, size }))
        fs.writeFileSync(path.join(dir, `index${index}`, file), `${text}\n`);
    };
    // Constructed in the shape of this machine's /sys/devices/system/cpu/cpu0/cache (AMD EPYC, 32 MiB L3).
    cache(0, 1, 'Data', '48K');
    cache(1, 1, 'Instruction', '32K');
    cache(2, 2, 'Unified', '1024K');
    cache(3, 3, 'Unified', '32768K');
    expect(lastLevelCacheBytes(dir)).toBe(32 * 2 ** 20);
    fs.writeFileSync(path.join(dir, 'index3', 'size'), '64M\n');
    expect(lastLevelCacheBytes(dir)).toBe(64 * 2 ** 20);
    fs.rmSync(path.join(dir, 'index3'), { recursive: true });
    fs.rmSync(path.join(dir, 'index2'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'index1', 'level'), '4\n');
    expect(lastLevelCacheBytes(dir)).toBe(48 * 2 ** 10);
    expect(lastLevelCacheBytes(path.join(dir, 'absent'))).toBeNull();
  });

  it('is null with the reason without TPOT or with an unknown cache type', async () => {
    const footprint = (await readDecodeFootprint(handMadeModel())) as DecodeFootprint;
    const base = {
      footprint,
      placement: { device: 'cpu' as const },
      meanContextTokens: 10,
      decodeSequences: 1,
      peak: null,
      peakReason: null,
    };
    expect(decodeBandwidth({ ...base, kvCacheTypes: { k: 'f16', v: 'f16' }, tpotMsMean: null }).reason).toMatch(/no TPOT/);
    expect(decodeBandwidth({ ...base, kvCacheTypes: { k: 'q3_x', v: 'f16' }, tpotMsMean: 5 }).reason).toBe('unknown KV-cache type q3_x');
  });

  it('is null with the reason for a server that drafts with a second model (no wrong figure for speculative decoding)', async () => {
    const bandwidth = await runDecodeBandwidth({
      modelPath: handMadeModel(),
      effectiveConfig: { argv: ['-m', 'target.gguf', '-md', 'draft.gguf', '--spec-type', 'draft-simple'] } as never,
      offload: { state: 'none' } as never,
      summary: { metrics: { tpot_ms: { mean: 5 } } } as never,
      rows: [],
      cacheDir: tempDir(),
    });
    expect(bandwidth.effective_gb_per_s).toBeNull();
    expect(bandwidth.reason).toMatch(/^speculative decoding: a target step verifies several drafted tokens/);
  });

  it('takes the mean decode context and the sequences decoding at once from the requests', () => {
    // Decoding spans [10, 110] and [70, 170]: 200 ms of decode over a 160 ms union = 1.25 sequences.
    const rows = [
      measuredRequest(0, { t0_ms: 0, ttft_ms: 10, e2e_ms: 110, prompt_tokens: 30, output_tokens: 20 }),
      measuredRequest(1, { t0_ms: 60, ttft_ms: 10, e2e_ms: 110, prompt_tokens: 50, output_tokens: 40 }),
      measuredRequest(2, { t0_ms: 0, error_class: 'timeout' }),
      measuredRequest(3, { warmup: true }),
    ];
    expect(decodeLoadOf(rows)).toEqual({ meanContextTokens: (30 + 10 + 50 + 20) / 2, decodeSequences: 1.25 });
  });

  it('reads the flags the server ran with', () => {
    expect(argvValue(['-m', 'x', '-t', '2', '-ctk', 'q8_0', '--threads', '4'], ['-t', '--threads'])).toBe('4');
    expect(argvValue(['-m', 'x'], ['-ctv'])).toBeNull();
  });
});

describe('the peak a run is compared with', () => {
  it('names the datasheet for known GPUs and says why for others', () => {
    expect(gpuPeakBandwidth('NVIDIA H100 80GB HBM3').peak).toMatchObject({ gb_per_s: 3350, kind: 'gpu datasheet' });
    expect(gpuPeakBandwidth('NVIDIA H200').peak?.gb_per_s).toBe(4800);
    expect(gpuPeakBandwidth('NVIDIA GeForce RTX 4090').peak?.source).toMatch(/RTX 4090/);
    expect(gpuPeakBandwidth('Some GPU').reason).toMatch(/not in the table/);
  });

  // The median of 9 reps. On this shared two-core machine (load average near 5) single reps range 3 to 25 GB/s
  // and medians 14 to 17 GB/s, so the stated tolerance is a factor of 1.5 either way.
  it('is measured once per machine and thread count, then read from the cache', async () => {
    const dir = tempDir();
    const cached = { gb_per_s: 12.5, threads: 3, buffer_bytes: 1, reps_gb_per_s: [12.5], measured_at: 'then' };
    fs.writeFileSync(path.join(dir, 'memory-read-probe.json'), JSON.stringify({ [probeCacheKey(3)]: cached }));
    expect(await reachableMemoryRead(3, dir)).toEqual(cached);
  });

  it('says how busy other processes kept the CPUs while it probed', async () => {
    const root = tempDir();
    fs.writeFileSync(path.join(root, 'stat'), 'cpu  100 0 100 900 0 0 0 0 0 0\ncpu0 1\ncpu1 1\n');
    // The machine's counters do not move while it works: nothing else ran (its own time is never counted against it).
    const quiet = await otherBusyCores(async () => new Promise((resolve) => setTimeout(() => resolve('done'), 50)), root);
    expect(quiet).toEqual({ result: 'done', otherBusyCores: 0 });
    expect((await otherBusyCores(async () => 1, path.join(root, 'absent'))).otherBusyCores).toBeNull();
  });
});
