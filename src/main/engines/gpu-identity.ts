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
 * One AMD GPU as `amd-smi list --json` lists it: amd-smi's index (what telemetry records and
 * gpuDevices names) and ROCm's device number for it, which HIP_VISIBLE_DEVICES and
 * ROCR_VISIBLE_DEVICES count in.
 */
export interface AmdGpuIdentity {
  index: number;
  bdf: string | null;
  /** ROCm's (HIP's and ROCr's) device number; null where amd-smi's list does not tell. */
  hipIndex: number | null;
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
 * `amd-smi list --json`: one entry per GPU with amd-smi's index (`gpu`), `bdf` and KFD's
 * `node_id`; `amd-smi list -e` adds `hip_id`. amd-smi numbers GPUs in its discovery order, HIP
 * and ROCr in KFD node order (amd-smi's own HIP_ID is node_id less the smallest GPU node_id),
 * and the two orders differ on some hosts. ROCm's number is `hip_id` where printed, else the
 * GPU's place in node order; null for every GPU when an entry lacks both.
 */
export function parseAmdSmiList(text: string): AmdGpuIdentity[] {
  let json: unknown;
  try {
    json = JSON.parse(text.slice(Math.max(0, text.search(/[[{]/))));
  } catch {
    return [];
  }
  const entries: unknown[] = Array.isArray(json) ? json : isRecord(json) && Array.isArray(json.gpu_data) ? json.gpu_data : [];
  const rows = entries.filter(isRecord).flatMap((entry) => {
    const index = wholeNumber(entry.gpu);
    if (index === null) return [];
    return [
      { index, bdf: typeof entry.bdf === 'string' ? entry.bdf : null, hip: wholeNumber(entry.hip_id), node: wholeNumber(entry.node_id) },
    ];
  });
  const byNode = rows.every((row) => row.node !== null) ? [...rows].sort((a, b) => a.node! - b.node!) : null;
  const byHip = rows.every((row) => row.hip !== null);
  return rows.map((row) => ({
    index: row.index,
    bdf: row.bdf,
    hipIndex: byHip ? row.hip : byNode ? byNode.indexOf(row) : null,
  }));
}

/** amd-smi's list, where every GPU in it has a ROCm number; null where it cannot map them all. */
function mappedAmd(amd: readonly AmdGpuIdentity[] | null | undefined): readonly AmdGpuIdentity[] | null {
  return amd && amd.length > 0 && amd.every((gpu) => gpu.hipIndex !== null) ? amd : null;
}

/**
 * ROCm's device numbers (for HIP_VISIBLE_DEVICES) of GPUs chosen by amd-smi's index; null where
 * amd-smi's list cannot say (the indexes then pass as they are, which most hosts number alike).
 * An index amd-smi does not list passes unchanged: the presence check refuses it before launch.
 */
export function rocmDevicesFor(indexes: readonly number[], amd: readonly AmdGpuIdentity[] | null | undefined): number[] | null {
  const mapped = mappedAmd(amd);
  if (!mapped) return null;
  return indexes.map((index) => mapped.find((gpu) => gpu.index === index)?.hipIndex ?? index);
}

/** amd-smi's indexes of ROCm device numbers; null where amd-smi's list cannot say; a problem for a number it lacks. */
export function amdIndexesOfRocm(
  devices: readonly number[],
  amd: readonly AmdGpuIdentity[] | null | undefined,
): { indexes: number[] } | { missing: number; listed: number[] } | null {
  const mapped = mappedAmd(amd);
  if (!mapped) return null;
  const indexes: number[] = [];
  for (const device of devices) {
    const gpu = mapped.find((candidate) => candidate.hipIndex === device);
    if (!gpu) return { missing: device, listed: mapped.map((each) => each.hipIndex!).sort((a, b) => a - b) };
    indexes.push(gpu.index);
  }
  return { indexes };
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
