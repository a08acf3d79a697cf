import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../../src/shared/contract/engine';
import type { EffectiveConfig } from '../../src/shared/contract/server';
import { planEngine, type MachineFacts } from '../../src/main/engines/llamacpp/engine-plan';
import { describeEngineBuild, gpuEngineCheck } from '../../src/main/engines/llamacpp/engine-verdict';
import { describeGpuOffload } from '../../src/main/runner/gpu-offload';
import { emptyEffectiveConfig } from '../../src/main/engines/engine-adapter';
import { parseLogFacts } from '../../src/main/engines/llamacpp/log-facts';
import { offloadLine } from '../../src/shared/gpu-offload';
import type { GpuOffload } from '../../src/shared/contract/runs';
import { telemetryLines } from '../../src/main/cli/summary-table';
import { readCaptured } from '../support/captured';

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
      weights: null,
      warning: null,
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

/** A GPU engine's effective configuration read from a log, as the adapter reads it. */
function configFromLog(text: string): EffectiveConfig {
  const facts = parseLogFacts(text.split('\n'));
  return {
    ...emptyEffectiveConfig([]),
    layersOffloaded: facts.layersOffloaded,
    buffersMib: facts.buffersMib,
    inputEmbedding: facts.inputEmbedding,
  };
}

describe('offload truth: what ran where, from the weight bytes per device', () => {
  it('captured: all layers on a Radeon RX 570 with only the input embeddings in host memory is full', () => {
    const offload = describeGpuOffload(
      engine('vulkan'),
      configFromLog(readCaptured('llama-logs/vulkan-2024-device-named-buffer-rx570-33of33.log')),
    );
    expect(offload).toMatchObject({ state: 'full', reason: null, warning: null });
    expect(offload.weights!.devices).toEqual([
      { device: 'Radeon RX 570 Series', mib: 4155.99, host: false },
      { device: 'CPU', mib: 281.81, host: true },
    ]);
    expect(offloadLine(offload)).toBe('offload: full (vulkan): 33/33 layers; weights Radeon RX 570 Series 4156 MiB, CPU 282 MiB (host)');
  });

  it('captured: 44 of 49 layers on two GPUs is partial, naming the weight bytes on every device', () => {
    const offload = describeGpuOffload(
      engine('cuda'),
      configFromLog(readCaptured('llama-logs/cuda-journald-prefixed-koboldcpp-44of49-2gpu.log')),
    );
    expect(offload.state).toBe('partial');
    expect(offload.reason).toMatch(/^5 of 49 layers stayed on the CPU; weights: CUDA0 31014 MiB, .*CPU 809 MiB \(host\)/);
    expect(offload.warning).toBeNull();
  });

  it('constructed: every layer offloaded but the MoE experts in host memory is partial, with the warning', () => {
    // The figures of a Qwen3-30B-A3B run with --n-cpu-moe: 25/25 layers, CUDA0 1,242 MiB, CPU_Mapped 10,949 MiB.
    const log = [
      'print_info: n_embd           = 2048',
      'print_info: n_vocab          = 151936',
      'load_tensors: offloaded 25/25 layers to GPU',
      'load_tensors:        CUDA0 model buffer size =  1242.00 MiB',
      'load_tensors:   CPU_Mapped model buffer size = 10949.00 MiB',
    ].join('\n');
    const offload = describeGpuOffload(engine('cuda'), configFromLog(log));
    expect(offload.state).toBe('partial');
    expect(offload.reason).toMatch(/^all 25 layers were offloaded, but 10949 MiB of weights \(90 %\) stayed in host memory/);
    expect(offload.warning).toMatch(/^MOST WEIGHTS ARE IN HOST MEMORY: 10949 of 12191 MiB \(90 %\)/);
  });

  it('constructed: a small model whose embedding table is a quarter of its weights is still full; one byte more than the table is not', () => {
    // Qwen2.5-0.5B's shape: the 151,936 × 896 embedding table (≤ 259.6 MiB at 2 bytes a weight) stays in host memory by design.
    const log = (hostMib: number) =>
      [
        'print_info: n_embd           = 896',
        'print_info: n_vocab          = 151936',
        'load_tensors: offloaded 25/25 layers to GPU',
        'load_tensors:        CUDA0 model buffer size =   500.00 MiB',
        `load_tensors:   CPU_Mapped model buffer size =   ${hostMib.toFixed(2)} MiB`,
      ].join('\n');
    expect(describeGpuOffload(engine('cuda'), configFromLog(log(259))).state).toBe('full');
    expect(describeGpuOffload(engine('cuda'), configFromLog(log(262))).state).toBe('partial');
  });

  it('constructed: Metal buffers are GPU memory, pinned CUDA_Host weights are host memory', () => {
    const metal = describeGpuOffload(
      engine('metal'),
      configFromLog(
        [
          'load_tensors: offloaded 29/29 layers to GPU',
          'load_tensors: Metal_Mapped model buffer size =  4460.45 MiB',
          'load_tensors:   CPU_Mapped model buffer size =   315.30 MiB',
        ].join('\n'),
      ),
    );
    expect(metal.state).toBe('full');
    const pinned = describeGpuOffload(
      engine('cuda'),
      configFromLog(
        [
          'load_tensors: offloaded 33/33 layers to GPU',
          'load_tensors:        CUDA0 model buffer size =  1000.00 MiB',
          'load_tensors:    CUDA_Host model buffer size =  3000.00 MiB',
        ].join('\n'),
      ),
    );
    expect(pinned.weights!.host_mib).toBe(3000);
    expect(pinned).toMatchObject({ state: 'partial', warning: expect.stringMatching(/^MOST WEIGHTS ARE IN HOST MEMORY/) });
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

describe("a run's GPU figures where its engine ran on the CPU", () => {
  it('are marked context in the printed summary, and only where nothing was offloaded', () => {
    // Constructed: the GPU a CPU engine's run read on a GPU box, and the same GPU under a full offload.
    const gpu = {
      name: 'NVIDIA H100',
      memory_total_mib: 81559,
      baseline_used_mib: 5120,
      peak_used_mib: 5120,
      server_used_mib_peak: 812,
      utilization_pct_mean: 87,
      power_w_mean: 310,
      samples: 20,
      other_processes_vram_mib: null,
    };
    const telemetry = {
      gpu,
      gpu_unavailable_reason: null,
      server_process: null,
      server_metrics: null,
      sampler: { interval_ms: 250, cpu_pct: 1 },
    };
    const gpuLine = (offload: GpuOffload | null | undefined) => telemetryLines(telemetry, offload).find((line) => line.startsWith('GPU '))!;
    const none = {
      state: 'none' as const,
      backend: 'cpu' as const,
      layers: { offloaded: 0, total: 8 },
      reason: 'no layers were offloaded',
    };
    expect(gpuLine(none)).toMatch(
      /^GPU NVIDIA H100 \(context only: a cpu engine with nothing offloaded ran on the CPU, so these GPU figures are the machine's, not this run's\): VRAM baseline 5120 MiB/,
    );
    for (const offload of [
      { ...none, state: 'full' as const, backend: 'cuda' as const, layers: { offloaded: 9, total: 9 }, reason: null },
      null,
      undefined,
    ])
      expect(gpuLine(offload)).toMatch(/^GPU NVIDIA H100: VRAM /);
  });
});
