import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { capturedFiles, readCaptured } from '../support/captured';
import { chooseCandidates, groupCandidates, quantLabel } from '../../src/main/models/plan/candidates';
import { largestFullContext, planFit, RUNTIME_ALLOWANCE_BYTES, type PlanGpu, type PlanHost } from '../../src/main/models/plan/fit';
import { computeBufferBytes, estimateMemory, type PlanSettings } from '../../src/main/models/plan/memory-estimate';
import type { ModelShape } from '../../src/main/models/plan/model-shape';
import { speedCeiling } from '../../src/main/models/plan/speed-ceiling';
import { parseHubRef } from '../../src/main/models/hub/hub-access';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** What a captured llama.cpp startup log says about the model, the context and the buffers it allocated. */
function logFacts(text: string) {
  const value = (key: string) => {
    const match = new RegExp(`print_info: ${key}\\s+= (\\d+)`).exec(text);
    return match ? Number(match[1]) : null;
  };
  const context = (key: string) => Number(new RegExp(`llama_context: ${key}\\s+= (\\d+)`).exec(text)![1]);
  const mib = (pattern: RegExp) => [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1]), 0);
  const nEmbd = value('n_embd')!;
  const nHead = value('n_head')!;
  const experts = value('n_expert') ?? 0;
  const shape: ModelShape = {
    architecture: /print_info: arch\s+= (\S+)/.exec(text)![1]!,
    nLayer: value('n_layer')!,
    nEmbd,
    nHead,
    nHeadKv: value('n_head_kv')!,
    headDimK: value('n_embd_head_k') ?? nEmbd / nHead,
    headDimV: value('n_embd_head_v') ?? nEmbd / nHead,
    nVocab: value('n_vocab')!,
    nFf: value('n_ff')!,
    experts: experts > 1 ? { count: experts, used: value('n_expert_used')!, feedForward: value('n_ff_exp')! } : null,
    contextTrain: value('n_ctx_train'),
    slidingWindow: null,
    mlaKeyLength: null,
    recurrent: false,
    layerBytes: [],
    expertBytes: 0,
    headBytes: 0,
    embeddingBytes: 0,
    tiedOutput: false,
    parameterCount: 0,
    fileType: null,
    unknownTypeTensors: [],
  };
  const settings: PlanSettings = {
    contextPerSlot: context('n_ctx'),
    parallel: 1,
    kvType: 'f16',
    flashAttention: context('flash_attn') === 1,
    ubatch: context('n_ubatch'),
    // These builds predate n_outputs_max: a step reserved logits for the whole ubatch.
    outputRows: context('n_ubatch'),
  };
  return {
    shape,
    settings,
    kvMib: mib(/KV buffer size =\s+([\d.]+) MiB/g),
    // The device's own compute buffer, not the host-side one (CUDA_Host, ROCm_Host, Vulkan_Host, CPU).
    computeMib: mib(/(?:CUDA0|ROCm0|Vulkan0|Metal)\s+compute buffer size =\s+([\d.]+) MiB/g),
  };
}

const CALIBRATION_LOGS = capturedFiles('llama-logs').filter((file) => file.includes('/plan-'));

describe('the memory estimate against captured llama.cpp logs', () => {
  it('has real logs to be checked against', () => {
    expect(CALIBRATION_LOGS.length).toBeGreaterThanOrEqual(7);
  });

  it.each(CALIBRATION_LOGS)('sizes the KV cache of %s (captured) as llama.cpp did', (file) => {
    const facts = logFacts(readCaptured(file));
    const estimate = estimateMemory(facts.shape, facts.settings);
    expect(estimate.kvBytes / MiB).toBeCloseTo(facts.kvMib, 0);
  });

  it('sizes the compute buffer within 30 % of every captured log, and within 5 % for the median', () => {
    const errors = CALIBRATION_LOGS.map((file) => {
      const facts = logFacts(readCaptured(file));
      const estimated = computeBufferBytes(facts.shape, facts.settings) / MiB;
      console.log(
        `[plan] compute buffer ${path.basename(file)}: ${estimated.toFixed(1)} MiB estimated, ${facts.computeMib} MiB in the log (${((estimated / facts.computeMib - 1) * 100).toFixed(1)} %)`,
      );
      return { file, error: estimated / facts.computeMib - 1 };
    });
    for (const { file, error } of errors) expect(Math.abs(error), file).toBeLessThan(0.3);
    const sorted = errors.map(({ error }) => Math.abs(error)).sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(0.05);
  });

  it('catches an estimate that forgets flash attention: the score matrix it counts is off by more than 100 %', () => {
    const worst = Math.max(
      ...CALIBRATION_LOGS.map((file) => {
        const facts = logFacts(readCaptured(file));
        const wrong = computeBufferBytes(facts.shape, { ...facts.settings, flashAttention: false }) / MiB;
        return Math.abs(wrong / facts.computeMib - 1);
      }),
    );
    expect(worst).toBeGreaterThan(1);
  });
});

/** A constructed dense model: 10 blocks of 100 MiB, a 50 MiB output head, a 40 MiB embedding. */
function denseShape(overrides: Partial<ModelShape> = {}): ModelShape {
  return {
    architecture: 'llama',
    nLayer: 10,
    nEmbd: 1024,
    nHead: 8,
    nHeadKv: 2,
    headDimK: 128,
    headDimV: 128,
    nVocab: 32000,
    nFf: 4096,
    experts: null,
    contextTrain: 32768,
    slidingWindow: null,
    mlaKeyLength: null,
    recurrent: false,
    layerBytes: new Array(10).fill(100 * MiB),
    expertBytes: 0,
    headBytes: 50 * MiB,
    embeddingBytes: 40 * MiB,
    tiedOutput: false,
    parameterCount: 1e9,
    fileType: 15,
    unknownTypeTensors: [],
    ...overrides,
  };
}

const SETTINGS: PlanSettings = { contextPerSlot: 4096, parallel: 1, kvType: 'f16', flashAttention: true, ubatch: 512 };
const gpu = (freeBytes: number, bandwidthGbPerS: number | null = 1000): PlanGpu => ({
  index: 0,
  name: 'GPU',
  totalBytes: 24 * GiB,
  freeBytes,
  bandwidthGbPerS,
});
const host = (availableBytes: number, bandwidthGbPerS: number | null = 50): PlanHost => ({
  totalBytes: 64 * GiB,
  availableBytes,
  bandwidthGbPerS,
});

describe('fitting a model to the GPUs', () => {
  const shape = denseShape();
  const estimate = estimateMemory(shape, SETTINGS);
  // 2 KV heads × (128 + 128) × 2 bytes per cell and layer.
  const kvPerLayer = 4096 * 2 * 256 * 2;
  const full = 1000 * MiB + 50 * MiB + 10 * kvPerLayer + estimate.computeBytes + RUNTIME_ALLOWANCE_BYTES;

  it('counts weights, the cache, the compute buffer and the runtime allowance', () => {
    expect(estimate.kvBytesPerLayer).toBe(kvPerLayer);
    expect(planFit(shape, SETTINGS, [gpu(full)], host(8 * GiB))).toMatchObject({
      verdict: 'fits',
      layersOnGpu: 11,
      layersTotal: 11,
      gpuBytes: full,
    });
  });

  it('offloads the last blocks that fit when the whole model does not, and keeps the rest in RAM', () => {
    const fit = planFit(shape, SETTINGS, [gpu(full - 1)], host(8 * GiB));
    expect(fit).toMatchObject({ verdict: 'partial', layersOnGpu: 10 });
    const sevenBlocks = estimate.computeBytes + RUNTIME_ALLOWANCE_BYTES + 7 * (100 * MiB + kvPerLayer);
    expect(planFit(shape, SETTINGS, [gpu(sevenBlocks + 1)], host(8 * GiB))).toMatchObject({ verdict: 'partial', layersOnGpu: 7 });
    expect(planFit(shape, SETTINGS, [gpu(sevenBlocks + 1)], host(8 * GiB)).hostBytes).toBe(
      3 * 100 * MiB + 50 * MiB + 40 * MiB + 3 * kvPerLayer + estimate.computeBytes,
    );
  });

  it('says "does not fit" when the layers left on the CPU do not fit in RAM', () => {
    expect(planFit(shape, SETTINGS, [gpu(full / 2)], host(100 * MiB)).verdict).toBe('no');
  });

  it('runs on the CPU with no GPU, or when not one block fits', () => {
    expect(planFit(shape, SETTINGS, [], host(8 * GiB))).toMatchObject({ verdict: 'cpu', layersOnGpu: 0, largestFullContext: null });
    expect(planFit(shape, SETTINGS, [gpu(RUNTIME_ALLOWANCE_BYTES)], host(8 * GiB)).verdict).toBe('cpu');
    expect(planFit(shape, SETTINGS, [], host(GiB)).verdict).toBe('no');
  });

  it('finds the largest context that fits fully: it fits there and not 256 tokens later', () => {
    const gpus = [gpu(1.8 * GiB)];
    const largest = largestFullContext(shape, SETTINGS, gpus)!;
    expect(largest % 256).toBe(0);
    expect(planFit(shape, { ...SETTINGS, contextPerSlot: largest }, gpus, host(8 * GiB)).verdict).toBe('fits');
    expect(planFit(shape, { ...SETTINGS, contextPerSlot: largest + 256 }, gpus, host(8 * GiB)).verdict).not.toBe('fits');
    // Two slots share the memory: each gets about half, a little more because a slot's attention spans only its own cells.
    const perSlotOfTwo = largestFullContext(shape, { ...SETTINGS, parallel: 2 }, gpus)!;
    expect(perSlotOfTwo).toBeGreaterThanOrEqual(largest / 2);
    expect(perSlotOfTwo).toBeLessThanOrEqual(largest / 2 + 1024);
    expect(largestFullContext(shape, SETTINGS, [gpu(100 * MiB)])).toBeNull();
  });

  it('quantizing the cache to q8_0 fits a longer context than f16', () => {
    const gpus = [gpu(1.8 * GiB)];
    expect(largestFullContext(shape, { ...SETTINGS, kvType: 'q8_0' }, gpus)!).toBeGreaterThan(largestFullContext(shape, SETTINGS, gpus)!);
  });

  it('says where the cache figure is only a bound', () => {
    expect(estimateMemory(denseShape({ slidingWindow: 4096 }), SETTINGS).notes.join()).toMatch(/sliding-window/);
    expect(estimateMemory(denseShape({ mlaKeyLength: 576 }), SETTINGS).kvBytesPerLayer).toBe(4096 * 576 * 2);
  });
});

describe('the decode-speed ceiling', () => {
  it('is bandwidth over the weights a step reads, with the GPU holding everything', () => {
    const shape = denseShape();
    const fit = planFit(shape, SETTINGS, [gpu(8 * GiB, 1000)], host(8 * GiB));
    const ceiling = speedCeiling(shape, fit, [gpu(8 * GiB, 1000)], host(8 * GiB));
    expect(ceiling).toMatchObject({ bytesPerToken: 1050 * MiB });
    expect('tokensPerS' in ceiling && ceiling.tokensPerS).toBeCloseTo(1000e9 / (1050 * MiB), 6);
  });

  it('counts only the experts a token uses in a MoE block', () => {
    // Each block: 90 MiB of routed experts (8 of 64 used) and 10 MiB of the rest.
    const shape = denseShape({ experts: { count: 64, used: 8, feedForward: 512 }, expertBytes: 900 * MiB });
    const fit = planFit(shape, SETTINGS, [gpu(8 * GiB)], host(8 * GiB));
    const ceiling = speedCeiling(shape, fit, [gpu(8 * GiB)], host(8 * GiB));
    expect('bytesPerToken' in ceiling && ceiling.bytesPerToken / MiB).toBeCloseTo(10 * (10 + 90 / 8) + 50, 6);
  });

  it('adds the time of the layers read from host memory at the host bandwidth', () => {
    const shape = denseShape();
    const estimate = estimateMemory(shape, SETTINGS);
    const free = estimate.computeBytes + RUNTIME_ALLOWANCE_BYTES + 5 * (100 * MiB + estimate.kvBytesPerLayer) + 1;
    const fit = planFit(shape, SETTINGS, [gpu(free, 1000)], host(8 * GiB, 50));
    expect(fit.layersOnGpu).toBe(5);
    const ceiling = speedCeiling(shape, fit, [gpu(free, 1000)], host(8 * GiB, 50));
    const seconds = (500 * MiB) / 1000e9 + (550 * MiB) / 50e9;
    expect('tokensPerS' in ceiling && ceiling.tokensPerS).toBeCloseTo(1 / seconds, 6);
  });

  it('names what is missing instead of guessing', () => {
    const shape = denseShape();
    const fit = planFit(shape, SETTINGS, [gpu(8 * GiB, null)], host(8 * GiB));
    expect(speedCeiling(shape, fit, [{ ...gpu(8 * GiB, null), name: 'Mystery GPU' }], host(8 * GiB))).toEqual({
      reason: 'no datasheet bandwidth for Mystery GPU',
    });
  });
});

describe('candidate files', () => {
  it('reads the quantization from the names publishers use', () => {
    expect(quantLabel('Qwen3-8B-Q4_K_M.gguf')).toBe('Q4_K_M');
    expect(quantLabel('Qwen3-30B-A3B-UD-Q4_K_XL.gguf')).toBe('UD-Q4_K_XL');
    expect(quantLabel('Meta-Llama-3.1-8B-Instruct-IQ4_XS.gguf')).toBe('IQ4_XS');
    expect(quantLabel('BF16/Model-BF16-00001-of-00002.gguf')).toBe('BF16');
    expect(quantLabel('gpt-oss-20b-mxfp4.gguf')).toBe('MXFP4');
    expect(quantLabel('model.q8_0.gguf')).toBe('Q8_0');
    expect(quantLabel('weird-name.gguf')).toBe('weird-name');
  });

  it('joins split parts into one candidate, keeps projectors apart by their names and reports missing parts', () => {
    const { candidates, problems } = groupCandidates([
      'Q8_0/M-Q8_0-00002-of-00002.gguf',
      'Q8_0/M-Q8_0-00001-of-00002.gguf',
      'M-Q4_K_M.gguf',
      'mmproj-M-F16.gguf',
      'README.md',
      'Q2_K/M-Q2_K-00001-of-00003.gguf',
      'Q2_K/M-Q2_K-00003-of-00003.gguf',
    ]);
    expect(candidates).toEqual([
      { label: 'Q4_K_M', files: ['M-Q4_K_M.gguf'] },
      { label: 'mmproj-M-F16', files: ['mmproj-M-F16.gguf'] },
      { label: 'Q8_0', files: ['Q8_0/M-Q8_0-00001-of-00002.gguf', 'Q8_0/M-Q8_0-00002-of-00002.gguf'] },
    ]);
    expect(problems).toEqual(['Q2_K/M-Q2_K: split into 3 parts, but part 2 is missing']);
  });

  it('labels files of one quantization by their names, so that a label picks one: two adapters, or two models, both F16', () => {
    const { candidates } = groupCandidates(['tune-a-F16.gguf', 'b/tune-b-F16.gguf', 'M-Q8_0.gguf', 'big/Big-F16-00001-of-00001.gguf']);
    expect(Object.fromEntries(candidates.map((candidate) => [candidate.files[0], candidate.label]))).toEqual({
      'tune-a-F16.gguf': 'tune-a-F16',
      'b/tune-b-F16.gguf': 'tune-b-F16',
      'big/Big-F16-00001-of-00001.gguf': 'Big-F16',
      'M-Q8_0.gguf': 'Q8_0',
    });
  });

  it('chooses by label case-insensitively and names the quantizations the repository lacks', () => {
    const candidates = [
      { label: 'Q4_K_M', files: ['a'] },
      { label: 'Q8_0', files: ['b'] },
    ];
    expect(chooseCandidates(candidates, ['q8_0', 'Q3_K_M'])).toEqual({ chosen: [candidates[1]], unmatched: ['Q3_K_M'] });
    expect(chooseCandidates(candidates, 'all').chosen).toHaveLength(2);
  });
});

describe('hub names', () => {
  it('reads hf:OWNER/REPO with an optional revision', () => {
    expect(parseHubRef('hf:Qwen/Qwen3-8B-GGUF')).toEqual({ repo: 'Qwen/Qwen3-8B-GGUF', revision: 'main' });
    expect(parseHubRef('hf:unsloth/gpt-oss-20b-GGUF@v1.0')).toEqual({ repo: 'unsloth/gpt-oss-20b-GGUF', revision: 'v1.0' });
  });

  it.each(['hf:Qwen', 'hf:../etc/passwd', 'hf:a/b/c', 'hf:a/b?x=1'])('refuses %s with what to write', (text) => {
    expect(() => parseHubRef(text)).toThrow(/write hf:OWNER\/REPO/);
  });

  it.each(['hf:a/b@..', 'hf:a/b@x y'])('refuses the revision of %s with what to write after the @', (text) => {
    expect(() => parseHubRef(text)).toThrow(/is not a revision name: write a branch, tag or commit after the @/);
  });
});
