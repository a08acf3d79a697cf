import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../../src/shared/contract/engine';
import { assertGpusPresent, gpuSelectionEnv, needsGpuIdentities, withInheritedGpuChoice } from '../../src/main/engines/gpu-selection';
import { parseAmdSmiList, type GpuIdentities } from '../../src/main/engines/gpu-identity';
import { llamaCppAdapter } from '../../src/main/engines/adapters/llamacpp-adapter';
import { vllmAdapter } from '../../src/main/engines/adapters/python-servers';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { readGpuUsedOnce } from '../../src/main/telemetry/gpu-memory-snapshot';
import { selectedGpuIndexes } from '../../src/shared/gpu-devices';
import { measureOneWindow } from '../support/telemetry-window';

/**
 * Constructed `amd-smi list --json` (the fields amd-smi's list command prints: gpu, bdf, uuid,
 * kfd_id, node_id, partition_id) for a two-GPU host where amd-smi's discovery order is not KFD's
 * node order. HIP and ROCr number GPUs by KFD node (amd-smi computes its own HIP_ID as node_id
 * less the smallest GPU node_id), so amd-smi's GPU 0 is HIP device 1 here. Hosts like this exist
 * (unslothai/unsloth#8669: "the two agree on most hosts and not on all of them").
 */
const SWAPPED_LIST = `[
  {"gpu": 0, "bdf": "0000:83:00.0", "uuid": "f1ff74a1-0000-1000-80c1-6b7e3c8d8f12", "kfd_id": 52803, "node_id": 3, "partition_id": 0},
  {"gpu": 1, "bdf": "0000:03:00.0", "uuid": "4dff74a1-0000-1000-8093-f7b8a6c6d9e0", "kfd_id": 17766, "node_id": 2, "partition_id": 0}
]`;

const amdHost = (): GpuIdentities => ({ nvidia: null, vulkan: null, amd: parseAmdSmiList(SWAPPED_LIST) });

/** A user's own llama-server from the PATH: its backend (here a HIP build) is not known to Infer Lab. */
const ownLlamaServer: EngineInfo = {
  origin: 'path',
  serverPath: '/opt/llama.cpp/build-hip/bin/llama-server',
  toolsDir: '/opt/llama.cpp/build-hip/bin',
  version: null,
  commit: null,
  backend: null,
  build: null,
};

describe("ROCm's device numbers against amd-smi's (constructed amd-smi list output)", () => {
  it("reads amd-smi's list: each GPU's index and its HIP index, by KFD node order or amd-smi's own hip_id", () => {
    expect(parseAmdSmiList(SWAPPED_LIST)).toEqual([
      { index: 0, bdf: '0000:83:00.0', hipIndex: 1 },
      { index: 1, bdf: '0000:03:00.0', hipIndex: 0 },
    ]);
    // `amd-smi list -e` prints HIP's own number: taken as it is.
    expect(parseAmdSmiList('[{"gpu": 0, "node_id": 2, "hip_id": 1}, {"gpu": 1, "node_id": 1, "hip_id": 0}]')).toEqual([
      { index: 0, bdf: null, hipIndex: 1 },
      { index: 1, bdf: null, hipIndex: 0 },
    ]);
    // An amd-smi that names no node: nothing to map by.
    expect(parseAmdSmiList('[{"gpu": 0, "bdf": "0000:03:00.0", "uuid": "x"}]')).toEqual([
      { index: 0, bdf: '0000:03:00.0', hipIndex: null },
    ]);
    expect(parseAmdSmiList('not json')).toEqual([]);
  });

  it("gives a ROCm server the HIP numbers of the GPUs chosen by amd-smi's numbers: llama-server, vLLM", () => {
    const profile = { ...defaultProfile(), gpuDevices: '0' };
    expect(gpuSelectionEnv('0', null, amdHost())).toMatchObject({
      HIP_VISIBLE_DEVICES: '1',
      CUDA_VISIBLE_DEVICES: '1',
      ROCR_VISIBLE_DEVICES: null,
    });
    // In amd-smi's order, so the server's ROCm0 is amd-smi's GPU 0.
    expect(gpuSelectionEnv('0,1', null, amdHost())).toMatchObject({ HIP_VISIBLE_DEVICES: '1,0' });
    const launch = llamaCppAdapter(ownLlamaServer, amdHost()).launch({ modelPath: '/m.gguf', port: 1, profile });
    expect(launch.env).toMatchObject({ HIP_VISIBLE_DEVICES: '1' });
    expect(vllmAdapter('vllm', amdHost()).launch({ modelPath: '/m', port: 1, profile }).env).toMatchObject({ HIP_VISIBLE_DEVICES: '1' });
    // Without amd-smi's list (or on an NVIDIA machine) the numbers go through as they are.
    expect(gpuSelectionEnv('0', null)).toMatchObject({ HIP_VISIBLE_DEVICES: '0' });
  });

  it("follows a shell's ROCR_VISIBLE_DEVICES and HIP_VISIBLE_DEVICES to amd-smi's numbers, which telemetry counts", () => {
    const inherited = (environment: NodeJS.ProcessEnv) =>
      withInheritedGpuChoice(defaultProfile(), null, environment, null, amdHost().amd).gpuDevices;
    // ROCr's device 0 is the GPU on KFD node 2: amd-smi's GPU 1.
    expect(inherited({ ROCR_VISIBLE_DEVICES: '0' })).toBe('1');
    expect(inherited({ HIP_VISIBLE_DEVICES: '1' })).toBe('0');
    // ROCR first, then HIP's indexes within what it left: HIP 0 of ROCR "1,0" is ROCr's 1, amd-smi's 0.
    expect(inherited({ ROCR_VISIBLE_DEVICES: '1,0', HIP_VISIBLE_DEVICES: '0' })).toBe('0');
    // A device number the host does not have is refused before anything starts.
    expect(() => inherited({ ROCR_VISIBLE_DEVICES: '2' })).toThrow(
      /ROCR_VISIBLE_DEVICES names ROCm device 2, but amd-smi lists 2 GPUs \(ROCm devices 0, 1\)/,
    );
  });

  it("reads amd-smi's list before a ROCm-capable server starts with a GPU choice", () => {
    expect(needsGpuIdentities({ ...defaultProfile(), gpuDevices: '0' }, null, {})).toBe(true);
    expect(needsGpuIdentities(defaultProfile(), null, { ROCR_VISIBLE_DEVICES: '1' })).toBe(true);
    expect(needsGpuIdentities(defaultProfile(), null, { HIP_VISIBLE_DEVICES: '1' })).toBe(true);
    expect(needsGpuIdentities(defaultProfile(), null, {})).toBe(false);
    expect(needsGpuIdentities({ ...defaultProfile(), gpuDevices: '0' }, 'cuda', {})).toBe(false);
  });

  it('checks a chosen GPU against amd-smi where there is no nvidia-smi, and names the tool', async () => {
    expect(() => assertGpusPresent('3', [0, 1], 'amd-smi')).toThrow('gpuDevices=3: GPU 3 is not on this machine; amd-smi lists 0, 1');
    const amdDir = path.join(__dirname, '..', 'fixtures', 'nvidia-smi', 'amd-bin');
    const savedPath = process.env.PATH;
    process.env.PATH = `${amdDir}:${path.dirname(process.execPath)}`;
    try {
      const reading = await readGpuUsedOnce();
      expect(reading?.tool).toBe('amd-smi');
      expect([...reading!.used.keys()]).toEqual([0]);
      expect(reading!.used.get(0)).toBeGreaterThan(0);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it("counts only the shell's chosen GPU in amd-smi telemetry (the amd-smi stand-in, two GPUs)", async () => {
    // ROCR_VISIBLE_DEVICES=0 on the swapped host is amd-smi's GPU 1: the run's telemetry counts it alone.
    const profile = withInheritedGpuChoice(defaultProfile(), null, { ROCR_VISIBLE_DEVICES: '0' }, null, amdHost().amd);
    const amdDir = path.join(__dirname, '..', 'fixtures', 'nvidia-smi', 'amd-bin');
    const savedPath = process.env.PATH;
    process.env.PATH = `${amdDir}:${path.dirname(process.execPath)}`;
    process.env.FAKE_AMD_FILE = 'amd-smi-metric-two-gpus.json';
    try {
      const session = await measureOneWindow(
        { serverPid: null, metricsUrl: null, gpuBinary: null, gpuIndexes: selectedGpuIndexes(profile.gpuDevices) },
        1200,
      );
      expect(session.summary().gpu).toMatchObject({
        gpu_count: 2,
        chosen_indexes: [1],
        peak_used_mib: 9000,
        utilization_pct_mean: 91,
        power_w_mean: 250,
      });
    } finally {
      process.env.PATH = savedPath;
      delete process.env.FAKE_AMD_FILE;
    }
  });
});
