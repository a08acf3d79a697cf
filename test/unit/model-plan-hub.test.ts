import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planModels, type PlanMachine } from '../../src/main/models/plan/plan-models';
import { planText } from '../../src/main/cli/plan-table';
import { readGgufHeaderAsync } from '../../src/main/models/gguf-reader';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { scanModels } from '../../src/main/models/model-library';
import { writeSyntheticAdapter } from '../../src/main/models/synthetic-adapter';
import { DEMO_MODEL_SHAPE } from '../../src/main/models/synthetic-model';
import { useTinyGgufHub, type StandInHub, type StandInHubOptions } from '../support/stand-in-hub';
import { useTempDirs } from '../support/temp';

const GiB = 2 ** 30;
const tempDir = useTempDirs();

const tinyHub = useTinyGgufHub('tiny/Tiny-GGUF');
const withHub = ({ gatedFor, ...options }: Omit<StandInHubOptions, 'repos'> & { gatedFor?: string[] } = {}): Promise<StandInHub> =>
  tinyHub.start(options, { gatedFor });

/** A constructed machine: one GPU with `gpuFree` bytes free and a known datasheet bandwidth, 1 GiB of RAM. */
function machine(gpuFree: number): PlanMachine {
  return {
    gpus: [
      {
        index: 0,
        name: 'NVIDIA GeForce RTX 4090',
        totalBytes: 24 * GiB,
        freeBytes: gpuFree,
        bandwidthGbPerS: 1008,
        bandwidthSource: 'constructed for the test',
      },
    ],
    host: { totalBytes: 2 * GiB, availableBytes: GiB },
    gpuSource: 'constructed for the test',
    hostBandwidth: async () => ({ gbPerS: 20, source: 'constructed for the test' }),
  };
}

/** A local URL nothing listens on. */
async function unusedPortUrl(): Promise<string> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}`;
}

const env = (url: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ HF_ENDPOINT: url, HF_HOME: tempDir(), ...extra });

describe('planning from a hub repository (stand-in hub on a local port)', () => {
  it('plans every GGUF from its header, read by range without downloading the files', async () => {
    const server = await withHub({ pageSize: 2 });
    const plan = await planModels({ source: 'hf:tiny/Tiny-GGUF' }, machine(8 * GiB), { env: env(server.url) });
    expect(plan.problems).toEqual([]);
    expect(plan.revision).toBe('main');
    expect(plan.candidates.map((candidate) => [candidate.label, candidate.fit?.verdict, candidate.files.length])).toEqual([
      ['F32', 'fits', 1],
      ['F16', 'fits', 2],
      ['Q4_K_M', 'fits', 1],
      ['mmproj-Tiny-F16', undefined, 1],
    ]);
    // The projector beside the weights: what it encodes, from its header; nothing of its own to fit.
    expect(plan.candidates[3]).toMatchObject({
      architecture: 'clip',
      projector: { vision: true, audio: false, projectorType: 'gemma3' },
      memory: null,
      fit: null,
      problem: null,
    });
    const f32 = plan.candidates[0]!;
    expect(f32.sizeBytes).toBe(tinyHub.files['Tiny-F32.gguf']!.length);
    expect(f32).toMatchObject({ architecture: 'llama', contextTrain: 8192, problem: null });
    // 4 blocks × 2 KV heads × (64 + 64) × 2 bytes × 4,096 cells.
    expect(f32.memory!.kvBytes).toBe(4 * 2 * 128 * 2 * 4096);
    expect(f32.ceiling!.tokensPerS).toBeCloseTo(1008e9 / f32.ceiling!.bytesPerToken, 6);
    // The split model's parts are planned as one: its tensors are those of the single F16 file.
    expect(plan.candidates[1]!.memory!.offloadableBytes).toBe(plan.candidates[2]!.memory!.offloadableBytes);
    const served = server.requests.reduce((sum, request) => sum + request.bytesSent, 0);
    const stored = Object.values(tinyHub.files).reduce((sum, bytes) => sum + bytes.length, 0);
    expect(served).toBeLessThan(stored / 4);
    expect(server.requests.filter((request) => request.path.includes('/resolve/')).every((request) => request.range !== null)).toBe(true);
    // The projector's header too was read by range.
    expect(server.requests.filter((request) => request.path.includes('/resolve/') && request.path.includes('mmproj'))).not.toEqual([]);
    // Three listing pages of two entries each.
    expect(server.requests.filter((request) => request.path.includes('/tree/'))).toHaveLength(3);
  });

  it('orders what fits fully before what fits partly, and sizes before that by largest', async () => {
    const server = await withHub();
    const roomy = await planModels({ source: 'hf:tiny/Tiny-GGUF', quants: ['F16', 'F32'] }, machine(8 * GiB), { env: env(server.url) });
    const [f32, f16] = roomy.candidates.map((candidate) => candidate.fit!.gpuBytes);
    // Room for the F16 model and not for the F32 one.
    const plan = await planModels({ source: 'hf:tiny/Tiny-GGUF' }, machine((f32! + f16!) / 2), { env: env(server.url) });
    expect(plan.candidates.map((candidate) => [candidate.label, candidate.fit?.verdict])).toEqual([
      ['F16', 'fits'],
      ['Q4_K_M', 'fits'],
      ['F32', 'partial'],
      ['mmproj-Tiny-F16', undefined],
    ]);
    expect(plan.devices.find((device) => device.kind === 'host')!.bandwidthSource).toBe('constructed for the test');
  });

  it('plans only the quantizations asked for, and names those the repository lacks', async () => {
    const server = await withHub();
    const plan = await planModels({ source: 'hf:tiny/Tiny-GGUF', quants: ['q4_k_m', 'Q3_K_M'] }, machine(8 * GiB), {
      env: env(server.url),
    });
    expect(plan.candidates.map((candidate) => candidate.label)).toEqual(['Q4_K_M']);
    expect(plan.problems).toEqual(['no Q3_K_M in hf:tiny/Tiny-GGUF; it has F16, mmproj-Tiny-F16, F32, Q4_K_M']);
  });

  it('says a gated model needs its licence accepted and a token, and reads it with one', async () => {
    const server = await withHub({ gatedFor: ['hf_good'] });
    const url = server.url;
    await expect(planModels({ source: 'hf:tiny/Tiny-GGUF' }, machine(8 * GiB), { env: env(url) })).resolves.toMatchObject({
      candidates: expect.arrayContaining([
        expect.objectContaining({
          problem: `tiny/Tiny-GGUF is a gated model: accept its licence at ${url}/tiny/Tiny-GGUF, then set HF_TOKEN to a token of that account (https://huggingface.co/settings/tokens)`,
        }),
      ]),
    });
    const denied = await planModels({ source: 'hf:tiny/Tiny-GGUF', quants: ['F32'] }, machine(8 * GiB), {
      env: env(url, { HF_TOKEN: 'hf_other' }),
    });
    expect(denied.candidates[0]!.problem).toMatch(/gated model: accept its licence/);
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'token'), 'hf_good\n');
    const allowed = await planModels({ source: 'hf:tiny/Tiny-GGUF', quants: ['F32'] }, machine(8 * GiB), {
      env: { HF_ENDPOINT: url, HF_HOME: home },
    });
    expect(allowed.candidates[0]).toMatchObject({ problem: null, fit: { verdict: 'fits' } });
  });

  it('names an unknown repository, an unknown revision and an unreachable hub, each with what to do', async () => {
    const server = await withHub();
    await expect(planModels({ source: 'hf:tiny/Nope' }, machine(GiB), { env: env(server.url) })).rejects.toThrow(
      `no model repository tiny/Nope at ${server.url}: check the name (OWNER/REPO as in its URL); a private repository needs HF_TOKEN`,
    );
    await expect(planModels({ source: 'hf:tiny/Tiny-GGUF@v9' }, machine(GiB), { env: env(server.url) })).rejects.toThrow(
      'tiny/Tiny-GGUF has no revision "v9"',
    );
    const closed = await unusedPortUrl();
    await expect(planModels({ source: 'hf:tiny/Tiny-GGUF' }, machine(GiB), { env: env(closed) })).rejects.toThrow(
      new RegExp(`cannot reach the hub at ${closed} \\(ECONNREFUSED\\): check the network connection, or set HF_ENDPOINT`),
    );
  });

  it('refuses a server that ignores byte ranges instead of downloading whole files', async () => {
    const server = await withHub({ ignoreRange: true });
    const plan = await planModels({ source: 'hf:tiny/Tiny-GGUF', quants: ['F32'] }, machine(GiB), { env: env(server.url) });
    expect(plan.candidates[0]!.problem).toMatch(/the server ignored the byte range asked for/);
  });
});

describe('planning local files', () => {
  it('sets the newest measured decode of a file beside its ceiling, and nothing for a file never run', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'Tiny-Q4_K_M.gguf'), tinyHub.files['Tiny-Q4_K_M.gguf']!);
    fs.writeFileSync(path.join(dir, 'Tiny-F32.gguf'), tinyHub.files['Tiny-F32.gguf']!);
    const measuredFile = path.join(dir, 'Tiny-Q4_K_M.gguf');
    const plan = await planModels({ source: dir }, machine(8 * GiB), {
      latestDecodeOf: (file) =>
        file === measuredFile ? { id: 'run-1', started_at: '2026-12-01T00:00:00.000Z', tpot_ms_mean: 2, decode_sequences: 1 } : undefined,
    });
    const measured = plan.candidates.find((candidate) => candidate.files[0] === measuredFile)!;
    expect(measured.measured).toMatchObject({ runId: 'run-1', tokensPerS: 500, decodeSequences: 1 });
    expect(measured.measured!.ofCeiling).toBeCloseTo(500 / measured.ceiling!.tokensPerS, 9);
    expect(plan.candidates.find((candidate) => candidate.files[0] !== measuredFile)!.measured).toBeNull();
  });
});

describe('planning a local folder with what is served beside its models', () => {
  it('lists its LoRA adapters and image projectors as rows of their own, checked against --for, as a hub plan does', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'Tiny-F32.gguf'), tinyHub.files['Tiny-F32.gguf']!);
    fs.writeFileSync(path.join(dir, 'mmproj-Tiny-F16.gguf'), tinyHub.files['mmproj-Tiny-F16.gguf']!);
    const adapter = path.join(dir, 'tune-lora.gguf');
    writeSyntheticAdapter(adapter, DEMO_MODEL_SHAPE);
    const base = { model: 'demo:q8_0', header: await readGgufHeaderAsync(await resolveModelRef('demo:q8_0')) };
    const plan = await planModels({ source: dir }, machine(8 * GiB), { base });
    const byLabel = new Map(plan.candidates.map((candidate) => [candidate.label, candidate]));
    expect([...byLabel.keys()].sort()).toEqual(['F32', 'mmproj-Tiny-F16', 'tune-lora']);
    expect(byLabel.get('mmproj-Tiny-F16')!.projector).toEqual({ vision: true, audio: false, projectorType: 'gemma3' });
    expect(byLabel.get('tune-lora')!.adapter).toMatchObject({ rank: 8, base: { model: 'demo:q8_0', fits: true, problem: null } });
    expect(plan.problems).toEqual([]);
    // In words: a local file is served from where it is, with nothing to pull.
    const text = planText(plan);
    expect(text).toContain(
      `mmproj-Tiny-F16: a multimodal projector (gemma3) for images; serve the model with --set projector=${path.join(dir, 'mmproj-Tiny-F16.gguf')}`,
    );
    expect(text).toMatch(/^tune-lora: a LoRA adapter for llama models, rank 8, alpha 16, on 8 tensors; fits demo:q8_0$/m);
    // The model library still lists models only.
    expect((await scanModels([dir])).models.map((model) => path.basename(model.path))).toEqual(['Tiny-F32.gguf']);
  });
});

describe('the hub token stays with the hub', () => {
  it('is not sent to the CDN a file redirects to', async () => {
    const server = await withHub({ redirectToCdn: true });
    const plan = await planModels({ source: 'hf:tiny/Tiny-GGUF', quants: ['F32'] }, machine(8 * GiB), {
      env: env(server.url, { HF_TOKEN: 'hf_secret' }),
    });
    expect(plan.candidates[0]!.problem).toBeNull();
    const cdn = server.requests.filter((request) => request.origin === 'cdn');
    expect(cdn.length).toBeGreaterThan(0);
    expect(cdn.every((request) => request.authorization === null)).toBe(true);
    expect(
      server.requests.filter((request) => request.origin === 'hub').every((request) => request.authorization === 'Bearer hf_secret'),
    ).toBe(true);
  });

  it('is not sent to a next-page link on another origin', async () => {
    const server = await withHub({ pageSize: 2, nextPageElsewhere: true });
    await planModels({ source: 'hf:tiny/Tiny-GGUF' }, machine(8 * GiB), { env: env(server.url, { HF_TOKEN: 'hf_secret' }) }).catch(
      () => null,
    );
    const elsewhere = server.requests.filter((request) => request.origin === 'cdn');
    expect(elsewhere.length).toBeGreaterThan(0);
    expect(elsewhere.every((request) => request.authorization === null)).toBe(true);
  });
});
