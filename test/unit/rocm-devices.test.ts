import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EngineInfo } from '../../src/shared/contract/engine';
import { assertGpusPresent, gpuSelectionEnv, needsGpuIdentities, withInheritedGpuChoice } from '../../src/main/engines/gpu-selection';
import { parseAmdSmiList, rocrUuidOfAmdSmi, type GpuIdentities } from '../../src/main/engines/gpu-identity';
import { llamaCppAdapter } from '../../src/main/engines/adapters/llamacpp-adapter';
import { vllmAdapter } from '../../src/main/engines/adapters/python-servers';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { readGpuUsedOnce } from '../../src/main/telemetry/gpu-memory-snapshot';
import { selectedGpuIndexes } from '../../src/shared/gpu-devices';
import { readCaptured } from '../support/captured';
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
      { index: 0, bdf: '0000:83:00.0', rocrIndex: 1, rocrUuid: 'GPU-f1c16b7e3c8d8f12', deviceId: '74a1' },
      { index: 1, bdf: '0000:03:00.0', rocrIndex: 0, rocrUuid: 'GPU-4d93f7b8a6c6d9e0', deviceId: '74a1' },
    ]);
    // `amd-smi list -e` prints HIP_ID (node less the smallest GPU node): the node order gives the same.
    expect(parseAmdSmiList('[{"gpu": 0, "node_id": 2, "hip_id": 1}, {"gpu": 1, "node_id": 1, "hip_id": 0}]')).toEqual([
      { index: 0, bdf: null, rocrIndex: 1, rocrUuid: null, deviceId: null },
      { index: 1, bdf: null, rocrIndex: 0, rocrUuid: null, deviceId: null },
    ]);
    // An amd-smi that names no node and prints no UUID of its own shape: nothing to map by.
    expect(parseAmdSmiList('[{"gpu": 0, "bdf": "0000:03:00.0", "uuid": "x"}]')).toEqual([
      { index: 0, bdf: '0000:03:00.0', rocrIndex: null, rocrUuid: null, deviceId: null },
    ]);
    // Two partitions of one card print one UUID (ROCm/amdsmi#132 lists IDs 0 and 1 both as abff74a1-…): it pins neither.
    const partitions = parseAmdSmiList(
      '[{"gpu": 0, "bdf": "0000:05:00.0", "uuid": "abff74a1-0000-1000-80d1-3c23a9580558", "node_id": 2}, {"gpu": 1, "bdf": "0000:05:00.1", "uuid": "abff74a1-0000-1000-80d1-3c23a9580558", "node_id": 3}]',
    );
    expect(partitions.map((gpu) => gpu.rocrUuid)).toEqual([null, null]);
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

/** A rocminfo agent's KFD node, Uuid and BDFID (bus << 8 | device << 3 | function), as `0000:bb:dd.f`. */
function rocminfoAgent(text: string): { node: number; uuid: string; bdf: string } {
  const field = (label: string) => new RegExp(`^  ${label}:\\s+(\\S+)`, 'm').exec(text)![1]!;
  const bdfid = Number(field('BDFID'));
  const hex = (value: number) => value.toString(16).padStart(2, '0');
  return { node: Number(field('Node')), uuid: field('Uuid'), bdf: `0000:${hex(bdfid >> 8)}:${hex((bdfid >> 3) & 0x1f)}.${bdfid & 7}` };
}

const noGpuTools = (amd: GpuIdentities['amd']): GpuIdentities => ({ nvidia: null, vulkan: null, amd });

/** The two-card host's GPUs as amd-smi prints them (amd-smi's Python test: its processor order, bdf and UUID). */
function twoCardList(): string {
  const text = readCaptured('amd-smi/python-test-bdf-uuid-rx6800xt-w6800.txt');
  const processors = [...text.matchAll(/Processor (\d+), bdf: (\S+)[\s\S]*?uuid is: (\S+)/g)];
  return JSON.stringify(processors.map(([, gpu, bdf, uuid]) => ({ gpu: Number(gpu), bdf, uuid })));
}

describe('ROCm device numbering on captured amd-smi, rocminfo and rocm-smi output (test/fixtures/captured)', () => {
  it("reads amd-smi's list as text and as JSON, three hosts", () => {
    expect(parseAmdSmiList(readCaptured('amd-smi/list-text-2xmi210-rocm6.3.3-zero-serial-uuids.txt'))).toEqual([
      { index: 0, bdf: '0000:03:00.0', rocrIndex: 0, rocrUuid: null, deviceId: '740f' },
      { index: 1, bdf: '0000:83:00.0', rocrIndex: 1, rocrUuid: null, deviceId: '740f' },
    ]);
    // The list is followed by rocm-smi's output in the same paste: only the list's lines count.
    expect(parseAmdSmiList(readCaptured('amd-smi/list-text-1xmi210-rocm6.3.3-with-rocm-smi-uniqueid.txt'))).toEqual([
      { index: 0, bdf: '0000:03:00.0', rocrIndex: 0, rocrUuid: 'GPU-67c63ac3c3c637f9', deviceId: '740f' },
    ]);
    expect(parseAmdSmiList(readCaptured('amd-smi/list-json-strix-halo-radeon-8060s.json.txt'))).toEqual([
      { index: 0, bdf: '0000:c4:00.0', rocrIndex: 0, rocrUuid: null, deviceId: '1586' },
    ]);
  });

  it("finds in amd-smi's UUID the unique id ROCr names the GPU by: rocm-smi, rocminfo (matched by bus id) and amd-smi's asic_serial agree", () => {
    const [mi210] = parseAmdSmiList(readCaptured('amd-smi/list-text-1xmi210-rocm6.3.3-with-rocm-smi-uniqueid.txt'));
    const rocmSmi = /Unique ID: 0x([0-9a-f]{16})/.exec(readCaptured('amd-smi/list-text-1xmi210-rocm6.3.3-with-rocm-smi-uniqueid.txt'))![1];
    expect(mi210!.rocrUuid).toBe(`GPU-${rocmSmi}`);
    // rocminfo on the same host, before the second card came out: the agent at this card's bus id carries that UUID.
    const agents = ['rocminfo/agent3-2xmi210-rocm6.3.3-excerpt.txt', 'rocminfo/agent4-2xmi210-rocm6.3.3-excerpt.txt'].map((file) =>
      rocminfoAgent(readCaptured(file)),
    );
    expect(agents.find((agent) => agent.bdf === mi210!.bdf)?.uuid).toBe(mi210!.rocrUuid);
    // A second host, two different cards: every UUID's digits are the asic_serial amd-smi reports for the same bus id.
    const walkthrough = readCaptured('amd-smi/python-walkthrough-asic-rx6800xt-w6800-excerpt.txt');
    const serials = new Map(
      [...walkthrough.matchAll(/bdf: (\S+)[\s\S]*?'device_id'\] is: 0x(\w+)[\s\S]*?'asic_serial'\] is: 0x(\w+)/g)].map(
        ([, bdf, device, serial]) => [bdf!, { device: device!, serial: serial! }],
      ),
    );
    const listed = JSON.parse(twoCardList()) as { bdf: string; uuid: string }[];
    expect(listed).toHaveLength(2);
    for (const { bdf, uuid } of listed)
      expect(rocrUuidOfAmdSmi(uuid)).toEqual({
        rocrUuid: `GPU-${serials.get(bdf)!.serial.toLowerCase()}`,
        deviceId: serials.get(bdf)!.device,
      });
  });

  it("numbers GPUs for ROCr in KFD node order, which rocminfo's agents follow on the 2x MI210 host (matched by bus id)", () => {
    const gpus = parseAmdSmiList(readCaptured('amd-smi/list-text-2xmi210-rocm6.3.3-zero-serial-uuids.txt'));
    const agents = ['rocminfo/agent3-2xmi210-rocm6.3.3-excerpt.txt', 'rocminfo/agent4-2xmi210-rocm6.3.3-excerpt.txt'].map((file) =>
      rocminfoAgent(readCaptured(file)),
    );
    expect(agents.map((agent) => agent.node)).toEqual([2, 3]);
    expect(gpus).toHaveLength(2);
    for (const gpu of gpus) expect(agents.findIndex((agent) => agent.bdf === gpu.bdf)).toBe(gpu.rocrIndex);
    // rocminfo shows real UUIDs that this amd-smi zeroed: nothing is made up, one PCI device keeps HIP's numbers (unchanged behaviour).
    expect(agents.every((agent) => /^GPU-[0-9a-f]{16}$/.test(agent.uuid))).toBe(true);
    expect(gpuSelectionEnv('1', null, noGpuTools(gpus))).toMatchObject({ HIP_VISIBLE_DEVICES: '1', ROCR_VISIBLE_DEVICES: null });
    expect(withInheritedGpuChoice(defaultProfile(), null, { HIP_VISIBLE_DEVICES: '1' }, null, gpus).gpuDevices).toBe('1');
  });

  it('pins a GPU by UUID in ROCR_VISIBLE_DEVICES on the host with two different cards, whose HIP order amd-smi cannot tell', () => {
    const amd = parseAmdSmiList(twoCardList());
    expect(gpuSelectionEnv('1', null, noGpuTools(amd))).toEqual({
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      CUDA_VISIBLE_DEVICES: null,
      HIP_VISIBLE_DEVICES: null,
      ROCR_VISIBLE_DEVICES: 'GPU-1f75223e5e64eac1',
      GPU_DEVICE_ORDINAL: null,
    });
    // In amd-smi's order, so the server's ROCm0 is amd-smi's GPU 0.
    expect(gpuSelectionEnv('1,0', null, noGpuTools(amd))).toMatchObject({
      ROCR_VISIBLE_DEVICES: 'GPU-81c16890a5911040,GPU-1f75223e5e64eac1',
    });
    const profile = { ...defaultProfile(), gpuDevices: '0' };
    expect(vllmAdapter('vllm', noGpuTools(amd)).launch({ modelPath: '/m', port: 1, profile }).env).toMatchObject({
      ROCR_VISIBLE_DEVICES: 'GPU-81c16890a5911040',
      HIP_VISIBLE_DEVICES: null,
    });
    // An engine Infer Lab built for CUDA is left as it was.
    expect(gpuSelectionEnv('1', 'cuda', noGpuTools(amd))).toMatchObject({ CUDA_VISIBLE_DEVICES: '1', HIP_VISIBLE_DEVICES: '1' });
  });

  it("follows a shell's ROCR_VISIBLE_DEVICES given as a UUID (prefix, any case) to amd-smi's index; HIP's numbers on that host are not guessed", () => {
    const amd = parseAmdSmiList(twoCardList());
    const inherited = (environment: NodeJS.ProcessEnv) => withInheritedGpuChoice(defaultProfile(), null, environment, null, amd).gpuDevices;
    expect(inherited({ ROCR_VISIBLE_DEVICES: 'GPU-81c16890a5911040' })).toBe('0');
    expect(inherited({ ROCR_VISIBLE_DEVICES: 'GPU-1F75223E' })).toBe('1');
    expect(inherited({ ROCR_VISIBLE_DEVICES: 'GPU-1f75223e5e64eac1', HIP_VISIBLE_DEVICES: '0' })).toBe('1');
    // A UUID no GPU here has, and HIP's numbers where its order is not known: the server gets them as they are, telemetry counts every GPU.
    expect(inherited({ ROCR_VISIBLE_DEVICES: 'GPU-67c63ac3c3c637f9' })).toBe('all');
    expect(inherited({ HIP_VISIBLE_DEVICES: '1' })).toBe('all');
  });

  it("counts in telemetry the GPU the shell's UUID names (the amd-smi stand-in, two GPUs)", async () => {
    const profile = withInheritedGpuChoice(
      defaultProfile(),
      null,
      { ROCR_VISIBLE_DEVICES: 'GPU-1f75223e5e64eac1' },
      null,
      parseAmdSmiList(twoCardList()),
    );
    const amdDir = path.join(__dirname, '..', 'fixtures', 'nvidia-smi', 'amd-bin');
    const savedPath = process.env.PATH;
    process.env.PATH = `${amdDir}:${path.dirname(process.execPath)}`;
    process.env.FAKE_AMD_FILE = 'amd-smi-metric-two-gpus.json';
    try {
      const session = await measureOneWindow(
        { serverPid: null, metricsUrl: null, gpuBinary: null, gpuIndexes: selectedGpuIndexes(profile.gpuDevices) },
        1200,
      );
      expect(session.summary().gpu).toMatchObject({ gpu_count: 2, chosen_indexes: [1], peak_used_mib: 9000 });
    } finally {
      process.env.PATH = savedPath;
      delete process.env.FAKE_AMD_FILE;
    }
  });

  it("pins the APU of a laptop with a discrete card by ROCr's node number, since neither GPU has a UUID (list constructed from the captured rocm-smi table)", () => {
    // rocminfo on that laptop: GPU agents on KFD nodes 1 (RX 6800M) and 2 (the APU's gfx90c), both `Uuid: GPU-XX`.
    const rocminfo = readCaptured('rocminfo/gpu-agents-rx6800m-gfx90c-igpu-excerpt.txt');
    expect([...rocminfo.matchAll(/^ {2}Node:\s+(\d+)/gm)].map((match) => Number(match[1]))).toEqual([1, 2]);
    expect([...rocminfo.matchAll(/^ {2}Uuid:\s+(\S+)/gm)].map((match) => match[1])).toEqual(['GPU-XX', 'GPU-XX']);
    // No amd-smi list was published for it. Constructed from its rocm-smi table (device, node, PCI device id), with
    // the all-zero unique id amd-smi 6.3 prints for a GPU without one (as on the 2x MI210 host); no bdf.
    const table = readCaptured('rocm-smi/concise-rx6800m-gfx90c-igpu.txt');
    const rows = [...table.matchAll(/^(\d+)\s+(\d+)\s+0x([0-9a-f]{4}),/gm)].map(([, gpu, node, device]) => ({
      gpu: Number(gpu),
      uuid: `00ff${device}-0000-1000-8000-000000000000`,
      node_id: Number(node),
    }));
    expect(rows.map((row) => row.uuid.slice(4, 8))).toEqual(['73df', '1638']);
    const amd = parseAmdSmiList(JSON.stringify(rows));
    expect(gpuSelectionEnv('1', null, noGpuTools(amd))).toMatchObject({
      ROCR_VISIBLE_DEVICES: '1',
      HIP_VISIBLE_DEVICES: null,
      CUDA_VISIBLE_DEVICES: null,
    });
    const inherited = (environment: NodeJS.ProcessEnv) => withInheritedGpuChoice(defaultProfile(), null, environment, null, amd).gpuDevices;
    expect(inherited({ ROCR_VISIBLE_DEVICES: '1' })).toBe('1');
    expect(inherited({ HIP_VISIBLE_DEVICES: '1' })).toBe('all');
  });
});
