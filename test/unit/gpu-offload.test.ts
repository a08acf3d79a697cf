import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../../src/shared/contract/engine';
import type { EffectiveConfig } from '../../src/shared/contract/server';
import { planEngine, type MachineFacts } from '../../src/main/engines/llamacpp/engine-plan';
import { describeEngineBuild, gpuEngineCheck } from '../../src/main/engines/llamacpp/engine-verdict';
import { describeGpuOffload } from '../../src/main/runner/gpu-offload';
import { emptyEffectiveConfig } from '../../src/main/engines/engine-adapter';

function engine(backend: EngineInfo['backend'], build: Partial<NonNullable<EngineInfo['build']>> | null = null): EngineInfo {
  return {
    origin: 'managed',
    serverPath: '/cache/bin/llama-server',
    toolsDir: '/cache/bin',
    version: 'version: 0.4.0-dev (build 1, commit 80fb11a)',
    commit: '80fb11a',
    backend,
    build: build && { route: 'prebuilt', packages: [], cpuVariant: null, gpuLibrary: null, fallbackReason: null, ...build },
  };
}

function config(layers: EffectiveConfig['layersOffloaded'], backendLibraries?: string[]): EffectiveConfig {
  return { ...emptyEffectiveConfig([]), layersOffloaded: layers, ...(backendLibraries ? { backendLibraries } : {}) };
}

const gpuMachine: MachineFacts = {
  platform: 'linux',
  arch: 'x64',
  nvidia: { gpus: ['NVIDIA H200'], driverVersion: '580.95.05', driverCudaVersion: '13.0' },
  cudaRuntimes: [],
  vulkanDevices: null,
  nvcc: null,
};

describe("a run's gpu_offload", () => {
  it('is none with the reason on a CPU engine, naming a failed prebuilt GPU engine', () => {
    expect(describeGpuOffload(engine('cpu'), config(null))).toMatchObject({
      state: 'none',
      reason: 'the engine is a CPU build (backend cpu)',
    });
    const fellBack = describeGpuOffload(
      engine('cpu', { route: 'source', fallbackReason: 'libcudart.so.13: cannot open shared object file\nmore' }),
      null,
    );
    expect(fellBack.reason).toBe(
      'the engine is a CPU build: the prebuilt GPU engine failed (libcudart.so.13: cannot open shared object file)',
    );
  });

  it('is full, partial or none on a GPU engine from the layers the server offloaded', () => {
    expect(describeGpuOffload(engine('cuda'), config({ offloaded: 33, total: 33 }, ['libggml-cuda.so', 'libggml-cpu-zen4.so']))).toEqual({
      state: 'full',
      backend: 'cuda',
      layers: { offloaded: 33, total: 33 },
      reason: null,
    });
    expect(describeGpuOffload(engine('cuda'), config({ offloaded: 20, total: 33 })).reason).toBe('13 of 33 layers stayed on the CPU');
    expect(describeGpuOffload(engine('cuda'), config({ offloaded: 0, total: 33 })).state).toBe('none');
    expect(describeGpuOffload(engine('cuda'), config(null)).state).toBe('unknown');
  });

  it('is none when a GPU engine ran without its GPU library loaded, whatever the log said', () => {
    const offload = describeGpuOffload(engine('cuda'), config({ offloaded: 33, total: 33 }, ['libggml-cpu-zen4.so']));
    expect(offload).toMatchObject({ state: 'none', reason: 'the cuda backend library did not load (loaded: libggml-cpu-zen4.so)' });
  });
});

describe('the GPU engine check', () => {
  it('warns that a GPU machine with a CPU engine measures the CPU, with the reason and the fix', () => {
    const check = gpuEngineCheck(gpuMachine, engine('cpu'), planEngine(gpuMachine));
    expect(check).toMatchObject({ id: 'gpu-engine', status: 'warning' });
    expect(check!.detail).toMatch(
      /^This machine has a GPU \(NVIDIA H200\) but the engine runs on the CPU, so every measurement is a CPU measurement: .*CUDA runtime/,
    );
    expect(check!.fix).toMatch(/install the CUDA runtime libraries/);
  });

  it('is ok for a GPU engine, and absent without a GPU or for an engine of unknown backend', () => {
    expect(gpuEngineCheck(gpuMachine, engine('cuda'), planEngine(gpuMachine))?.status).toBe('ok');
    const noGpu: MachineFacts = { ...gpuMachine, nvidia: null };
    expect(gpuEngineCheck(noGpu, engine('cpu'), planEngine(noGpu))).toBeNull();
    expect(gpuEngineCheck(gpuMachine, { ...engine(null), origin: 'path' }, planEngine(gpuMachine))).toBeNull();
  });

  it('describes how the engine was built', () => {
    expect(
      describeEngineBuild({
        route: 'prebuilt',
        packages: [{ name: '@node-llama-cpp/linux-x64', version: '3.21.1' }],
        cpuVariant: 'zen4',
        gpuLibrary: null,
        fallbackReason: null,
      }),
    ).toBe('compiled on prebuilt libraries @node-llama-cpp/linux-x64@3.21.1, loads CPU variant zen4');
    expect(
      describeEngineBuild({ route: 'source', packages: [], cpuVariant: null, gpuLibrary: null, fallbackReason: 'npm pack failed\ndetail' }),
    ).toBe('built from source; fell back from the prebuilt engine: npm pack failed');
  });
});
