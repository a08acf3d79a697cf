import { runToCompletion } from '../core/process';
import { findExecutable } from '../core/which';

/** One NVIDIA GPU as `nvidia-smi -L` lists it, with the MIG instances carved from it. */
export interface NvidiaGpuIdentity {
  index: number;
  name: string;
  /** "GPU-7e611089-…"; null where the listing leaves it out. */
  uuid: string | null;
  migUuids: string[];
}

/** One device from `vulkaninfo --summary`, at its place in the loader's enumeration (GPU0, GPU1, …). */
export interface VulkanDevice {
  index: number;
  name: string;
  /** PHYSICAL_DEVICE_TYPE_DISCRETE_GPU, ..._INTEGRATED_GPU, ..._CPU (a software renderer), ... */
  type: string;
  /** deviceUUID; null from vulkaninfo builds whose summary leaves it out. */
  uuid: string | null;
}

/**
 * One AMD GPU as `amd-smi list` lists it: amd-smi's index (what telemetry records and
 * gpuDevices names) and what ROCm's runtime knows the same GPU by. ROCr numbers GPUs by their
 * KFD node (ROCR_VISIBLE_DEVICES counts them so) and also takes their UUIDs; HIP's numbers count
 * the GPUs ROCr surfaces, which on a host with GPUs of different kinds are reported to follow
 * another order (rocm-devices.ts).
 */
export interface AmdGpuIdentity {
  index: number;
  bdf: string | null;
  /** ROCr's device number: the GPU's place among the KFD GPU nodes; null where amd-smi's list does not tell. */
  rocrIndex: number | null;
  /** "GPU-" and KFD's unique id in 16 hex digits, as ROCr spells it; null where amd-smi shows none, or two GPUs share one. */
  rocrUuid: string | null;
  /** The PCI device id (`740f`) amd-smi writes into its UUID; null where it prints none. */
  deviceId: string | null;
}

/** What a server's GPU choice is matched against; null where the tool is missing or fails. */
export interface GpuIdentities {
  nvidia: NvidiaGpuIdentity[] | null;
  vulkan: VulkanDevice[] | null;
  /** Read only where a server may be a ROCm build; absent or null otherwise. */
  amd?: AmdGpuIdentity[] | null;
}

/** `nvidia-smi -L`: "GPU 0: NVIDIA H200 (UUID: GPU-…)", each GPU's MIG lines indented under it. */
export function parseNvidiaSmiGpus(text: string): NvidiaGpuIdentity[] {
  const gpus: NvidiaGpuIdentity[] = [];
  for (const line of text.split(/\r?\n/)) {
    const gpu = /^GPU (\d+): (.+?)(?: \(UUID: ([^)]*)\))?\s*$/.exec(line);
    if (gpu) {
      gpus.push({ index: Number(gpu[1]), name: gpu[2]!.trim(), uuid: gpu[3]?.trim() || null, migUuids: [] });
      continue;
    }
    const mig = /^\s+MIG\b.*\(UUID: (MIG-[^)\s]+)\)\s*$/.exec(line);
    if (mig && gpus.length > 0) gpus.at(-1)!.migUuids.push(mig[1]!);
  }
  return gpus;
}

/** Devices from `vulkaninfo --summary`: each "GPUn:" block names its deviceType, deviceName and deviceUUID. */
export function parseVulkanSummary(text: string): VulkanDevice[] {
  const devices: VulkanDevice[] = [];
  const blocks = text.split(/^GPU(\d+):\s*$/m);
  for (let at = 1; at + 1 < blocks.length; at += 2) {
    const block = blocks[at + 1]!;
    const type = /deviceType\s*=\s*(\S+)/.exec(block)?.[1];
    const name = /deviceName\s*=\s*(.+?)\s*$/m.exec(block)?.[1];
    const uuid = /deviceUUID\s*=\s*([0-9a-fA-F-]+)\s*$/m.exec(block)?.[1] ?? null;
    if (type && name) devices.push({ index: Number(blocks[at]), name, type, uuid });
  }
  return devices;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function wholeNumber(raw: unknown): number | null {
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) return raw;
  return typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : null;
}

/**
 * amd-smi builds its UUID (amdsmi_uuid_gen, ROCm/amdsmi src/amd_smi/amd_smi_uuid.cc) from the
 * GPU's unique id (the one rocm-smi --showuniqueid and KFD report), its PCI device id and a
 * function byte: `SSffDDDD-0000-1000-80SS-SSSSSSSSSSSS`, the S being the unique id's 16 hex
 * digits in order. ROCr names the same GPU `GPU-` and those 16 digits (rocminfo's Uuid line);
 * captured output shows them agree on an MI210 (with rocm-smi and rocminfo) and on two Navi 21
 * cards (with amd-smi's asic_serial). A driver that gives no
 * unique id makes amd-smi print zeros (captured: 2x MI210, ROCm 6.3.3), which pin nothing; nor
 * does a UUID of any other shape.
 */
export function rocrUuidOfAmdSmi(uuid: string): { rocrUuid: string | null; deviceId: string } | null {
  const parts = /^([0-9a-f]{2})[0-9a-f]{2}([0-9a-f]{4})-0000-1000-80([0-9a-f]{2})-([0-9a-f]{12})$/i.exec(uuid.trim());
  if (!parts) return null;
  const serial = `${parts[1]}${parts[3]}${parts[4]}`.toLowerCase();
  return { rocrUuid: /^0+$/.test(serial) ? null : `GPU-${serial}`, deviceId: parts[2]!.toLowerCase() };
}

/** `amd-smi list` as text: "GPU: 0" then indented "BDF: …", "UUID: …", "NODE_ID: …" lines, keyed as its JSON names them. */
function amdSmiListText(text: string): Record<string, unknown>[] {
  const entries: Record<string, unknown>[] = [];
  for (const line of text.split(/\r?\n/)) {
    const gpu = /^GPU:\s*(\d+)\s*$/.exec(line);
    const field = /^\s+([A-Z_]+):\s*(.*?)\s*$/.exec(line);
    if (gpu) entries.push({ gpu: Number(gpu[1]) });
    else if (field && entries.length > 0) entries.at(-1)![field[1]!.toLowerCase()] = field[2];
  }
  return entries;
}

function amdSmiListEntries(text: string): unknown[] {
  const start = text.search(/[[{]/);
  if (start < 0) return amdSmiListText(text);
  try {
    const json: unknown = JSON.parse(text.slice(start));
    return Array.isArray(json) ? json : isRecord(json) && Array.isArray(json.gpu_data) ? json.gpu_data : [];
  } catch {
    return amdSmiListText(text);
  }
}

/**
 * `amd-smi list --json` (or the same list as text): one entry per GPU with amd-smi's index
 * (`gpu`), `bdf`, `uuid` and KFD's `node_id`; `amd-smi list -e` adds `hip_id`. amd-smi numbers
 * GPUs in its own discovery order, which on some hosts is not KFD's. ROCr's number is the GPU's
 * place in KFD node order: its filter counts the KFD nodes that have compute cores, node by node
 * (ROCR-Runtime's RvdFilter, core/runtime/amd_filter_device.cpp). amd-smi's own HIP_ID (node_id
 * less the smallest GPU node_id) stands in where no node is printed; null for every GPU when an
 * entry lacks both.
 */
export function parseAmdSmiList(text: string): AmdGpuIdentity[] {
  const rows = amdSmiListEntries(text)
    .filter(isRecord)
    .flatMap((entry) => {
      const index = wholeNumber(entry.gpu);
      if (index === null) return [];
      const bdf = typeof entry.bdf === 'string' && /^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/i.test(entry.bdf) ? entry.bdf : null;
      const uuid = typeof entry.uuid === 'string' ? rocrUuidOfAmdSmi(entry.uuid) : null;
      return [{ index, bdf, uuid, hip: wholeNumber(entry.hip_id), node: wholeNumber(entry.node_id) }];
    });
  const byNode = rows.every((row) => row.node !== null) ? [...rows].sort((a, b) => a.node! - b.node!) : null;
  const byHip = rows.every((row) => row.hip !== null);
  const uuids = rows.map((row) => row.uuid?.rocrUuid ?? null);
  // Two entries with one UUID (partitions of one card, amd-smi's duplicate-UUID bugs) pin neither: ROCr's filter ends its list at an ambiguous one.
  const unique = (uuid: string | null) => (uuid !== null && uuids.indexOf(uuid) === uuids.lastIndexOf(uuid) ? uuid : null);
  return rows.map((row, at) => ({
    index: row.index,
    bdf: row.bdf,
    rocrIndex: byNode ? byNode.indexOf(row) : byHip ? row.hip : null,
    rocrUuid: unique(uuids[at] ?? null),
    deviceId: row.uuid?.deviceId ?? null,
  }));
}

/** NVML writes "GPU-<uuid>", Vulkan the bare UUID: compared without the prefix and case. */
function bareUuid(uuid: string): string {
  return uuid.trim().toLowerCase().replace(/^gpu-/, '');
}

/**
 * The Vulkan enumeration indexes (GGML_VK_VISIBLE_DEVICES) of GPUs chosen by nvidia-smi index.
 * NVIDIA's Vulkan driver reports a GPU's NVML UUID as its deviceUUID, so the UUID is the one
 * key both tools share; Vulkan's order itself follows the loader, not the PCI bus.
 */
export function vulkanIndexesFor(indexes: readonly number[], identities: GpuIdentities): { indexes: number[] } | { problem: string } {
  if (identities.nvidia === null || identities.nvidia.length === 0)
    return { problem: 'nvidia-smi lists no GPU here, so its indexes cannot be matched to Vulkan devices' };
  if (identities.vulkan === null)
    return {
      problem: 'vulkaninfo is not installed, so Vulkan devices cannot be matched to GPUs (Debian/Ubuntu: apt-get install vulkan-tools)',
    };
  const chosen: number[] = [];
  for (const index of indexes) {
    const gpu = identities.nvidia.find((candidate) => candidate.index === index);
    if (!gpu)
      return { problem: `GPU ${index} is not on this machine; nvidia-smi lists ${identities.nvidia.map((each) => each.index).join(', ')}` };
    if (gpu.uuid === null) return { problem: `nvidia-smi -L gives no UUID for GPU ${index}` };
    const device = identities.vulkan.find((candidate) => candidate.uuid !== null && bareUuid(candidate.uuid) === bareUuid(gpu.uuid!));
    if (!device)
      return {
        problem: `no Vulkan device has GPU ${index}'s UUID (${gpu.uuid}); vulkaninfo --summary lists ${identities.vulkan.map((each) => `GPU${each.index} ${each.name}`).join(', ') || 'no device'}`,
      };
    chosen.push(device.index);
  }
  return { indexes: chosen };
}

/**
 * One CUDA_VISIBLE_DEVICES entry given as a UUID, read as the nvidia-smi index of its GPU.
 * CUDA takes any unique prefix of a "GPU-…" UUID. A MIG instance is not a whole GPU: choosing
 * its parent by index would hand the server the whole card, so it maps to nothing.
 */
export function gpuIndexOfUuid(entry: string, gpus: readonly NvidiaGpuIdentity[]): number | null {
  if (!/^GPU-[0-9a-f-]+$/i.test(entry)) return null;
  const matches = gpus.filter((gpu) => gpu.uuid !== null && gpu.uuid.toLowerCase().startsWith(entry.toLowerCase()));
  return matches.length === 1 ? matches[0]!.index : null;
}

async function captureOutput(tool: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | null> {
  const binary = findExecutable(tool, env);
  if (!binary) return null;
  try {
    const result = await runToCompletion(binary, args, { timeoutMs: 15_000, env });
    return result.code === 0 ? result.output : null;
  } catch {
    return null;
  }
}

/**
 * Reads the listings a GPU choice is matched against, without blocking the event loop;
 * vulkaninfo and amd-smi's list only when asked.
 */
export async function probeGpuIdentities(
  withVulkan: boolean,
  env: NodeJS.ProcessEnv = process.env,
  withAmd = false,
): Promise<GpuIdentities> {
  const [nvidiaText, vulkanText, amdText] = await Promise.all([
    captureOutput('nvidia-smi', ['-L'], env),
    withVulkan ? captureOutput('vulkaninfo', ['--summary'], env) : Promise.resolve(null),
    withAmd ? captureOutput('amd-smi', ['list', '--json'], env) : Promise.resolve(null),
  ]);
  return {
    nvidia: nvidiaText === null ? null : parseNvidiaSmiGpus(nvidiaText),
    vulkan: vulkanText === null ? null : parseVulkanSummary(vulkanText),
    amd: amdText === null ? null : parseAmdSmiList(amdText),
  };
}
