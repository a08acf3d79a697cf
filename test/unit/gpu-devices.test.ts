import { describe, expect, it } from 'vitest';
import { parseGpuDevices } from '../../src/shared/gpu-devices';
import { gpuChoiceLine } from '../../src/shared/gpu-choice-line';
import { assertGpusPresent, gpuSelectionEnv, needsGpuIdentities, withInheritedGpuChoice } from '../../src/main/engines/gpu-selection';
import { parseNvidiaSmiGpus, parseVulkanSummary, type GpuIdentities } from '../../src/main/engines/gpu-identity';
import { readCaptured } from '../support/captured';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { applySettings, validateProfile } from '../../src/main/engines/llamacpp/profile-rules';
import { vllmAdapter } from '../../src/main/engines/adapters/python-servers';
import { childEnvironment, withEnvChanges } from '../../src/main/core/child-env';

describe('choosing the GPUs a server uses (gpuDevices)', () => {
  it('reads "all" or nvidia-smi indexes, and names what is wrong with anything else', () => {
    expect(parseGpuDevices('all')).toEqual({ indexes: null });
    expect(parseGpuDevices('')).toEqual({ indexes: null });
    expect(parseGpuDevices('1, 0')).toEqual({ indexes: [0, 1] });
    expect(parseGpuDevices('3')).toEqual({ indexes: [3] });
    for (const bad of ['GPU0', '0;1', '-1', '64', '0,', 'CUDA0', '1.5'])
      expect(parseGpuDevices(bad), bad).toEqual({
        problem: expect.stringMatching(/^gpuDevices must be "all" or GPU indexes from 0 to 63/),
      });
    expect(parseGpuDevices('1,1')).toEqual({ problem: 'gpuDevices lists a GPU twice: "1,1"' });
  });

  it('is a profile setting that --set takes by name or as devices=, validated with the rest', () => {
    expect(defaultProfile().gpuDevices).toBe('all');
    expect(applySettings(defaultProfile(), ['devices=0,1']).gpuDevices).toBe('0,1');
    expect(applySettings(defaultProfile(), ['gpuDevices=2']).gpuDevices).toBe('2');
    expect(validateProfile({ ...defaultProfile(), gpuDevices: '0,1' })).toEqual([]);
    expect(validateProfile({ ...defaultProfile(), gpuDevices: 'first' })).toEqual([
      { field: 'gpuDevices', message: expect.stringMatching(/got "first"/) },
    ]);
    // llama-server's own --device beside gpuDevices: two choices that could disagree.
    expect(validateProfile({ ...defaultProfile(), gpuDevices: '1', extraFlags: ['--device', 'CUDA0'] })).toEqual([
      { field: 'extraFlags', message: expect.stringMatching(/--device and gpuDevices both choose GPUs; keep one/) },
    ]);
    expect(validateProfile({ ...defaultProfile(), extraFlags: ['--device', 'Vulkan1'] })).toEqual([]);
    // A profile saved before the field existed chooses every GPU.
    const { gpuDevices: _omitted, ...older } = defaultProfile();
    expect(validateProfile(older)).toEqual([]);
  });

  it("maps the choice to the CUDA and ROCm environment in nvidia-smi's (PCI bus) order; refuses engines that number GPUs otherwise", () => {
    expect(gpuSelectionEnv('all', 'cuda')).toEqual({});
    expect(gpuSelectionEnv(undefined, 'cpu')).toEqual({});
    const env = {
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      CUDA_VISIBLE_DEVICES: '0,2',
      HIP_VISIBLE_DEVICES: '0,2',
      ROCR_VISIBLE_DEVICES: null,
      GPU_DEVICE_ORDINAL: null,
    };
    expect(gpuSelectionEnv('2,0', 'cuda')).toEqual(env);
    // vLLM and SGLang: a CUDA or ROCm build, whichever the Python environment holds.
    expect(gpuSelectionEnv('2,0', null)).toEqual(env);
    expect(vllmAdapter('vllm').launch({ modelPath: '/m', port: 1, profile: { ...defaultProfile(), gpuDevices: '2,0' } }).env).toEqual(env);
    // HIP's indexes count only what ROCm's earlier filters left visible: a shell's filters are
    // withheld, so gpuDevices=0 means the machine's GPU 0, not the first GPU the shell left.
    const child = withEnvChanges(childEnvironment({ ROCR_VISIBLE_DEVICES: '2,3', GPU_DEVICE_ORDINAL: '1', HIP_VISIBLE_DEVICES: '1' }), env);
    expect([child.ROCR_VISIBLE_DEVICES, child.GPU_DEVICE_ORDINAL, child.HIP_VISIBLE_DEVICES]).toEqual([undefined, undefined, '0,2']);
    expect(() => gpuSelectionEnv('0', 'cpu')).toThrow(/gpuDevices=0: this engine is a CPU build and runs on no GPU; set gpuDevices=all/);
    expect(() => gpuSelectionEnv('0', 'metal')).toThrow(/one GPU; set gpuDevices=all/);
    expect(() => gpuSelectionEnv('1', 'vulkan')).toThrow(/numbers GPUs its own way.*--device VulkanN to extraFlags/);
  });

  it("maps a Vulkan engine's choice through each GPU's UUID to the loader's order (GGML_VK_VISIBLE_DEVICES)", () => {
    // Captured: a laptop whose Vulkan loader lists the Intel iGPU first (GPU0), the RTX 4070 second.
    // Constructed: that machine's `nvidia-smi -L`, with the UUID its Vulkan driver reported.
    const laptop: GpuIdentities = {
      nvidia: parseNvidiaSmiGpus('GPU 0: NVIDIA GeForce RTX 4070 Laptop GPU (UUID: GPU-7E611089-1272-699D-8985-AB84FEF4311E)\n'),
      vulkan: parseVulkanSummary(readCaptured('vulkaninfo/summary-intel-rpls-igpu-rtx4070-laptop-llvmpipe.txt')),
    };
    expect(gpuSelectionEnv('0', 'vulkan', laptop)).toEqual({ GGML_VK_VISIBLE_DEVICES: '1' });
    expect(gpuSelectionEnv('all', 'vulkan', laptop)).toEqual({});
    expect(() => gpuSelectionEnv('1', 'vulkan', laptop)).toThrow(
      /gpuDevices=1: .*GPU 1 is not on this machine; nvidia-smi lists 0; set gpuDevices=all/,
    );
    expect(() => gpuSelectionEnv('0', 'vulkan', { ...laptop, vulkan: null })).toThrow(
      /vulkaninfo is not installed.*apt-get install vulkan-tools/,
    );
    expect(() => gpuSelectionEnv('0', 'vulkan', { ...laptop, nvidia: null })).toThrow(/nvidia-smi lists no GPU here/);
    // A Vulkan driver that does not report the NVML UUID (an AMD card, an older summary): nothing is guessed.
    const noUuid = { ...laptop, vulkan: laptop.vulkan!.map((device) => ({ ...device, uuid: null })) };
    expect(() => gpuSelectionEnv('0', 'vulkan', noUuid)).toThrow(
      /no Vulkan device has GPU 0's UUID \(GPU-7E611089-1272-699D-8985-AB84FEF4311E\); vulkaninfo --summary lists GPU0 Intel\(R\) Graphics \(RPL-S\), GPU1 NVIDIA GeForce RTX 4070 Laptop GPU, GPU2 llvmpipe/,
    );
    // The listings are read only when a choice needs them.
    expect(needsGpuIdentities({ ...defaultProfile(), gpuDevices: '0' }, 'vulkan', {})).toBe(true);
    expect(needsGpuIdentities(defaultProfile(), 'vulkan', {})).toBe(false);
    expect(needsGpuIdentities({ ...defaultProfile(), gpuDevices: '0' }, 'cuda', {})).toBe(false);
    expect(needsGpuIdentities(defaultProfile(), 'cuda', { CUDA_VISIBLE_DEVICES: '1' })).toBe(false);
    expect(needsGpuIdentities(defaultProfile(), 'cuda', { CUDA_VISIBLE_DEVICES: 'GPU-7e61' })).toBe(true);
    expect(needsGpuIdentities(defaultProfile(), null, { CUDA_VISIBLE_DEVICES: '0,gpu-7e61' })).toBe(true);
  });

  it('follows CUDA_VISIBLE_DEVICES set in the shell when the profile leaves the choice to the environment', () => {
    const all = defaultProfile();
    const inherited = (environment: NodeJS.ProcessEnv, backend: 'cuda' | 'cpu' | 'vulkan' | null = 'cuda', profile = all) =>
      withInheritedGpuChoice(profile, backend, environment).gpuDevices;
    // Indexes, read as nvidia-smi's: launch, telemetry and the presence check then follow them.
    expect(inherited({ CUDA_VISIBLE_DEVICES: '1' })).toBe('1');
    expect(inherited({ CUDA_VISIBLE_DEVICES: '2, 0', CUDA_DEVICE_ORDER: 'PCI_BUS_ID' })).toBe('0,2');
    expect(inherited({ CUDA_VISIBLE_DEVICES: '1' }, null)).toBe('1');
    // Nothing set, or nothing to map to nvidia-smi's numbers: every GPU counts, the server gets the value as it was.
    expect(inherited({})).toBe('all');
    expect(inherited({ CUDA_VISIBLE_DEVICES: '1', CUDA_DEVICE_ORDER: 'FASTEST_FIRST' })).toBe('all');
    expect(inherited({ CUDA_VISIBLE_DEVICES: 'GPU-8f3a2c1e-0b4d-4e55-9a61-2f7c9d0e1b23' })).toBe('all');
    expect(inherited({ CUDA_VISIBLE_DEVICES: 'MIG-1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b' })).toBe('all');
    // GPU UUIDs, whole or a unique prefix as CUDA takes them, found in `nvidia-smi -L` (captured, 8 × H100).
    const h100s = parseNvidiaSmiGpus(readCaptured('nvidia-smi/list-gpus-8xH100-mig.txt'));
    const byUuid = (value: string, order?: string) =>
      withInheritedGpuChoice(all, 'cuda', { CUDA_VISIBLE_DEVICES: value, ...(order ? { CUDA_DEVICE_ORDER: order } : {}) }, h100s)
        .gpuDevices;
    expect(byUuid('GPU-7e7d2a20-56b8-3220-e75c-1f3185864bda')).toBe('1');
    expect(byUuid('gpu-7E7D2A20, GPU-63d1e50a')).toBe('0,1');
    expect(byUuid('3,GPU-7e7d2a20')).toBe('1,3');
    // A UUID names one GPU whatever the order; an index under FASTEST_FIRST does not.
    expect(byUuid('GPU-7e7d2a20', 'FASTEST_FIRST')).toBe('1');
    expect(byUuid('3,GPU-7e7d2a20', 'FASTEST_FIRST')).toBe('all');
    // Unknown, ambiguous, or a MIG instance (not a whole GPU): passed through unchanged, every GPU counted.
    expect(byUuid('GPU-00000000')).toBe('all');
    expect(byUuid('GPU-')).toBe('all');
    expect(byUuid('MIG-4d0efb7d-0970-51d9-b761-0686be6b8af3')).toBe('all');
    // The profile's own choice wins; engines that do not read CUDA's variables ignore them.
    expect(inherited({ CUDA_VISIBLE_DEVICES: '1' }, 'cuda', { ...all, gpuDevices: '0' })).toBe('0');
    expect(inherited({ CUDA_VISIBLE_DEVICES: '1' }, 'cpu')).toBe('all');
    expect(inherited({ CUDA_VISIBLE_DEVICES: '' }, 'vulkan')).toBe('all');
    // A value that hides every GPU would put a CUDA server on the CPU without a word.
    for (const hidden of ['', ' ', '-1', 'NoDevFiles'])
      expect(() => inherited({ CUDA_VISIBLE_DEVICES: hidden })).toThrow(
        /CUDA_VISIBLE_DEVICES=.* in inferlab's environment hides every GPU: the server would run on the CPU; unset it, or choose GPUs with gpuDevices/,
      );
  });

  it("follows ROCm's two filters set in the shell for a Python server, as amd-smi numbers the GPUs", () => {
    const inherited = (environment: NodeJS.ProcessEnv, backend: 'cuda' | null = null) =>
      withInheritedGpuChoice(defaultProfile(), backend, environment).gpuDevices;
    // ROCR_VISIBLE_DEVICES picks from the machine's GPUs; HIP_VISIBLE_DEVICES alone does the same.
    expect(inherited({ ROCR_VISIBLE_DEVICES: '3,1' })).toBe('1,3');
    expect(inherited({ HIP_VISIBLE_DEVICES: '2' })).toBe('2');
    // Together, HIP's indexes count only the GPUs ROCR left visible (ROCm's own order of filters).
    expect(inherited({ ROCR_VISIBLE_DEVICES: '1,2,3', HIP_VISIBLE_DEVICES: '0' })).toBe('1');
    expect(inherited({ ROCR_VISIBLE_DEVICES: '4,6', HIP_VISIBLE_DEVICES: '1,0' })).toBe('4,6');
    // HIP honours CUDA_VISIBLE_DEVICES where HIP_VISIBLE_DEVICES is unset, and prefers its own.
    expect(inherited({ ROCR_VISIBLE_DEVICES: '5,7', CUDA_VISIBLE_DEVICES: '1' })).toBe('7');
    expect(inherited({ ROCR_VISIBLE_DEVICES: '5,7', HIP_VISIBLE_DEVICES: '0', CUDA_VISIBLE_DEVICES: '1' })).toBe('5');
    // A llama.cpp CUDA build reads none of ROCm's variables.
    expect(inherited({ ROCR_VISIBLE_DEVICES: '1', CUDA_VISIBLE_DEVICES: '0' }, 'cuda')).toBe('0');
    // UUIDs and a third filter (GPU_DEVICE_ORDINAL) cannot be mapped: passed through, every GPU counted.
    expect(inherited({ ROCR_VISIBLE_DEVICES: 'GPU-4b2c1a9f8d3e6f7a' })).toBe('all');
    expect(inherited({ ROCR_VISIBLE_DEVICES: '1', GPU_DEVICE_ORDINAL: '0' })).toBe('all');
    // An index beyond what ROCR left, or a value that hides every GPU, is refused with what to do.
    expect(() => inherited({ ROCR_VISIBLE_DEVICES: '1,2', HIP_VISIBLE_DEVICES: '0,2' })).toThrow(
      'HIP_VISIBLE_DEVICES=0,2 counts only the 2 GPUs that ROCR_VISIBLE_DEVICES=1,2 leaves visible, so 2 names none; use indexes below 2, or unset one of the two',
    );
    for (const [name, hidden] of [
      ['ROCR_VISIBLE_DEVICES', '-1'],
      ['HIP_VISIBLE_DEVICES', ''],
    ])
      expect(() => inherited({ [name!]: hidden })).toThrow(`${name}=${JSON.stringify(hidden)} in inferlab's environment hides every GPU`);
  });

  it('refuses GPUs this machine does not list, before anything is spawned on them', () => {
    expect(() => assertGpusPresent('0,1', [0, 1, 2, 3])).not.toThrow();
    expect(() => assertGpusPresent('all', [])).not.toThrow();
    // Without nvidia-smi there is nothing to check against; the engine's own log tells.
    expect(() => assertGpusPresent('5', null)).not.toThrow();
    expect(() => assertGpusPresent('1,4,5', [0, 1])).toThrow('gpuDevices=1,4,5: GPUs 4, 5 are not on this machine; nvidia-smi lists 0, 1');
    expect(() => assertGpusPresent('0', [])).toThrow('gpuDevices=0: GPU 0 is not on this machine; nvidia-smi lists none');
  });

  it('says which GPUs a run counted and what the others did, as other GPU activity', () => {
    const perGpu = (index: number, peak: number, busy: number) => ({
      index,
      name: 'NVIDIA H100 80GB HBM3',
      memory_total_mib: 81559,
      baseline_used_mib: peak,
      peak_used_mib: peak,
      utilization_pct_mean: busy,
    });
    const gpu = {
      name: 'NVIDIA H100 80GB HBM3',
      gpu_count: 3,
      memory_total_mib: 81559,
      baseline_used_mib: 21212,
      peak_used_mib: 21212,
      server_used_mib_peak: 20000,
      utilization_pct_mean: 70,
      power_w_mean: 500,
      samples: 4,
      other_processes_vram_mib: null,
      per_gpu: [perGpu(0, 31024, 80), perGpu(1, 21212, 70), perGpu(2, 0, 0)],
    };
    expect(gpuChoiceLine(gpu)).toBeNull();
    expect(gpuChoiceLine({ ...gpu, chosen_indexes: [1] })).toBe(
      'GPU 1 of 3 counted (gpuDevices=1); other GPU activity: GPU 0 (NVIDIA H100 80GB HBM3) peak 31024 MiB, 80 % busy; GPU 2 (NVIDIA H100 80GB HBM3) peak 0 MiB, 0 % busy',
    );
  });
});
