import { describe, expect, it } from 'vitest';
import { planEngine, realVulkanGpu, type MachineFacts } from '../../src/main/engines/llamacpp/engine-plan';
import { LISTENING, listeningAddress, parseLogFacts } from '../../src/main/engines/llamacpp/log-facts';
import { parseNvidiaSmiHeader, parseNvidiaSmiList } from '../../src/main/engines/llamacpp/machine-probe';
import { parseNvidiaSmiGpus, parseVulkanSummary } from '../../src/main/engines/gpu-identity';
import { gpuPeakBandwidth } from '../../src/main/metrics/gpu-peak-bandwidth';
import { capturedFiles, readCaptured } from '../support/captured';

// Every file read here is captured output of the real tool, copied from the public source its header names
// (test/fixtures/captured/README.md); the values expected were read off each file by eye.

describe('captured plain nvidia-smi headers', () => {
  it.each([
    ['table-2xA100-580.126.09-bottlerocket.txt', '580.126.09', '13.0'],
    ['table-2xB200-610.43.02-kmd-umd.txt', '610.43.02', '13.3'],
    ['table-h200-610.43.02-kmd-umd.txt', '610.43.02', '13.3'],
    ['table-windows-rtx2080super-610.62-wddm-kmd-umd.txt', '610.62', '13.3'],
    ['table-h100-mig-590.48.01.txt', '590.48.01', '13.1'],
    ['table-rtx5090-rtx4090-580.82.09.txt', '580.82.09', '13.0'],
    ['table-windows-laptop-rtx3050-546.12-tcc-wddm.txt', '546.12', '12.3'],
    ['table-titan-xp-450.57-cuda11.0.txt', '450.57', '11.0'],
    ['table-rtx5070-575.64.03-cuda-na.txt', '575.64.03', null],
    ['table-gtx1050ti-430.14-cuda-na-power-na.txt', '430.14', null],
  ])('%s: driver %s, CUDA %s', (file, driverVersion, driverCudaVersion) => {
    expect(parseNvidiaSmiHeader(readCaptured(`nvidia-smi/${file}`))).toEqual({ driverVersion, driverCudaVersion });
  });

  it('every captured header gives a driver version', () => {
    for (const file of capturedFiles('nvidia-smi').filter((name) => name.includes('/table-')))
      expect(parseNvidiaSmiHeader(readCaptured(file)).driverVersion, file).toMatch(/^\d+\.\d+/);
  });

  it('a driver that names no CUDA version gets no CUDA engine, and the plan says why', () => {
    const header = parseNvidiaSmiHeader(readCaptured('nvidia-smi/table-rtx5070-575.64.03-cuda-na.txt'));
    const facts: MachineFacts = {
      platform: 'linux',
      arch: 'x64',
      nvidia: { gpus: ['NVIDIA GeForce RTX 5070'], ...header },
      cudaRuntimes: [{ major: 12, libraries: {} }],
      vulkanDevices: null,
      nvcc: null,
    };
    const plan = planEngine(facts);
    expect(plan.backend).toBe('cpu');
    expect(plan.warnings.join(' ')).toMatch(/nvidia-smi names no CUDA version/);
  });
});

describe('captured nvidia-smi -L', () => {
  it('lists the eight H100s, not their MIG devices', () => {
    const gpus = parseNvidiaSmiList(readCaptured('nvidia-smi/list-gpus-8xH100-mig.txt'));
    expect(gpus).toEqual(Array.from({ length: 8 }, () => 'NVIDIA H100 80GB HBM3'));
  });

  it("keeps each GPU's index and UUID, and its MIG instances under it", () => {
    const gpus = parseNvidiaSmiGpus(readCaptured('nvidia-smi/list-gpus-8xH100-mig.txt'));
    expect(gpus.map((gpu) => gpu.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(gpus.every((gpu) => /^GPU-[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/.test(gpu.uuid ?? ''))).toBe(true);
    expect(new Set(gpus.map((gpu) => gpu.uuid)).size).toBe(8);
    expect(gpus[0]).toMatchObject({ uuid: 'GPU-63d1e50a-b952-d15c-0740-12bc14859142' });
    expect(gpus[0]!.migUuids).toHaveLength(7);
    expect(gpus[0]!.migUuids[0]).toBe('MIG-4d0efb7d-0970-51d9-b761-0686be6b8af3');
    expect(gpus.flatMap((gpu) => gpu.migUuids)).toHaveLength(56);
  });
});

describe('captured vulkaninfo --summary', () => {
  const facts = (file: string): MachineFacts => ({
    platform: 'linux',
    arch: 'x64',
    nvidia: null,
    cudaRuntimes: [],
    vulkanDevices: parseVulkanSummary(readCaptured(`vulkaninfo/${file}`)),
    nvcc: null,
  });

  it.each([
    ['summary-windows-intel-hd530-radeon-r9-380.txt', 'AMD Radeon (TM) R9 380 Series', 2],
    ['summary-intel-rpls-igpu-rtx4070-laptop-llvmpipe.txt', 'NVIDIA GeForce RTX 4070 Laptop GPU', 3],
    ['summary-jetson-orin-nano-nvidia-integrated.txt', 'NVIDIA Tegra Orin (nvgpu)', 1],
    ['summary-devices-amdgpu-pro-rx6600xt.txt', 'AMD Radeon RX 6600 XT', 1],
  ])('%s: the engine plan picks %s among %i devices', (file, chosen, count) => {
    expect(facts(file).vulkanDevices).toHaveLength(count);
    expect(facts(file).vulkanDevices!.map((device) => device.index)).toEqual(Array.from({ length: count }, (_, index) => index));
    // Every capture gives GPU0's deviceUUID; the Windows one breaks off before GPU1's.
    expect(facts(file).vulkanDevices![0]!.uuid).toMatch(/^[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}$/);
    expect(realVulkanGpu(facts(file))?.name).toBe(chosen);
    expect(planEngine(facts(file))).toMatchObject({ backend: 'vulkan', reason: expect.stringContaining(chosen) });
  });
});

describe('captured llama.cpp startup logs, every build and format', () => {
  const facts = (file: string) => parseLogFacts(readCaptured(`llama-logs/${file}`).split('\n'));

  it('reads the 2024 format: llm_load_tensors buffers without a kind, llama_new_context_with_model, KV and output buffers', () => {
    expect(facts('cuda-2024-llm_load_tensors-2gpu-rtx4070ti-rtx3090ti.log')).toEqual({
      layersOffloaded: { offloaded: 41, total: 41 },
      buffersMib: {
        'CPU model': 1640.62,
        'CUDA0 model': 5434.38,
        'CUDA1 model': 13989.53,
        'CUDA0 KV': 1536,
        'CUDA1 KV': 3584,
        'CUDA_Host output': 1.95,
        'CUDA0 compute': 672.01,
      },
      trainedContext: null,
      contextSize: 4096,
      inputEmbedding: null,
      listening: false,
      listeningOn: null,
    });
    expect(facts('cuda-2024-partial-offload-78of81-rtx4060ti-rtx3060.log')).toMatchObject({
      layersOffloaded: { offloaded: 78, total: 81 },
      buffersMib: { 'CPU model': 22994.45, 'CUDA0 model': 12633.25, 'CUDA1 model': 8652, 'CUDA_Host KV': 64 },
      contextSize: 8192,
    });
  });

  it('reads a GPU buffer named after its device, split GGUF buffers summed, journald prefixes and llama_init_from_model', () => {
    expect(facts('vulkan-2024-device-named-buffer-rx570-33of33.log').buffersMib).toEqual({
      'Radeon RX 570 Series model': 4155.99,
      'CPU model': 281.81,
    });
    expect(facts('cpu-mapped-4-buffers-llama_context-flash_attn-koboldcpp.log')).toMatchObject({
      layersOffloaded: { offloaded: 0, total: 89 },
      buffersMib: { 'CPU_Mapped model': 80447.3 },
      contextSize: 32768,
    });
    expect(facts('cuda-journald-prefixed-koboldcpp-44of49-2gpu.log')).toMatchObject({
      layersOffloaded: { offloaded: 44, total: 49 },
      buffersMib: { 'CPU model': 809.29, 'CUDA0 model': 31014.14 },
    });
    expect(facts('cuda-2025-llama_init_from_model-8gpu-n_ctx_per_seq-warning.log')).toMatchObject({
      contextSize: 16384,
      trainedContext: 163840,
      buffersMib: { 'CUDA7 model': 19728.83, 'CUDA3 KV': 5096 },
    });
  });

  it('every captured log that prints a buffer line yields its buffers, and one that prints n_ctx yields the context', () => {
    for (const file of capturedFiles('llama-logs')) {
      const text = readCaptured(file);
      const parsed = parseLogFacts(text.split('\n'));
      if (/buffer size\s*=\s*\d/.test(text)) expect(Object.keys(parsed.buffersMib).length, file).toBeGreaterThan(0);
      // The context's own n_ctx line, not a slot's ("new slot, n_ctx = 65536").
      if (/(?:llama_context|llama_new_context_with_model|llama_init_from_model):\s+n_ctx\s*=\s*\d/.test(text))
        expect(parsed.contextSize, file).toBeGreaterThan(0);
      if (/offloaded \d+\/\d+ layers/.test(text)) expect(parsed.layersOffloaded, file).not.toBeNull();
    }
  });

  it('reads decimal commas and the ready line without a scheme (constructed lines in those builds\u2019 formats)', () => {
    expect(parseLogFacts(['load_tensors:      Vulkan0 model buffer size = 14674,45 MiB']).buffersMib).toEqual({
      'Vulkan0 model': 14674.45,
    });
    expect(LISTENING.test('main: server is listening on 127.0.0.1:8080 - starting the main loop')).toBe(true);
    expect(LISTENING.test('main: server is listening on http://127.0.0.1:8080')).toBe(true);
    expect(listeningAddress('srv  llama_server: server is listening on http://0.0.0.0:8000')).toBe('0.0.0.0:8000');
    expect(listeningAddress('llama server listening at http://0.0.0.0:8080')).toBe('0.0.0.0:8080');
    expect(
      listeningAddress(
        '{"timestamp":1700997080,"level":"INFO","function":"main","line":2917,"message":"HTTP server listening","hostname":"0.0.0.0","port":8080}',
      ),
    ).toBe('0.0.0.0:8080');
    expect(listeningAddress('main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 7')).toBeNull();
    // Older builds print this before the model is loaded: not yet ready.
    expect(LISTENING.test('main: HTTP server is listening, hostname: 127.0.0.1, port: 8080, http threads: 7')).toBe(false);
  });
});

describe('datasheet bandwidth by the exact board a captured nvidia-smi names', () => {
  const boardIn = (file: string) => /, (NVIDIA [^,]+),/.exec(readCaptured(file))![1]!;

  it('gives the SUPER its own figure, not the plain board the name starts with', () => {
    const name = boardIn('nvidia-smi/compute-apps-rtx4080super-595.71.05-load.csv');
    expect(name).toBe('NVIDIA GeForce RTX 4080 SUPER');
    expect(gpuPeakBandwidth(name).peak).toMatchObject({ gb_per_s: 736, label: 'NVIDIA GeForce RTX 4080 SUPER' });
    expect(gpuPeakBandwidth('NVIDIA GeForce RTX 4080').peak?.gb_per_s).toBe(716.8);
  });

  it('says a variant it does not know is unknown rather than borrowing a figure', () => {
    for (const name of ['NVIDIA GeForce RTX 3050 Laptop GPU', 'NVIDIA GeForce RTX 2080 SUPER', 'NVIDIA GeForce RTX 4090 D']) {
      expect(gpuPeakBandwidth(name).peak, name).toBeNull();
      expect(gpuPeakBandwidth(name).reason).toMatch(/is not in the table of known GPUs/);
    }
    expect(gpuPeakBandwidth('NVIDIA GeForce RTX 4060 Ti 16GB').peak?.label).toBe('NVIDIA GeForce RTX 4060 Ti');
  });
});
