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

/** What a server's GPU choice is matched against; null where the tool is missing or fails. */
export interface GpuIdentities {
  nvidia: NvidiaGpuIdentity[] | null;
  vulkan: VulkanDevice[] | null;
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

/** Reads the listings a GPU choice is matched against, without blocking the event loop; vulkaninfo only when asked. */
export async function probeGpuIdentities(withVulkan: boolean, env: NodeJS.ProcessEnv = process.env): Promise<GpuIdentities> {
  const [nvidiaText, vulkanText] = await Promise.all([
    captureOutput('nvidia-smi', ['-L'], env),
    withVulkan ? captureOutput('vulkaninfo', ['--summary'], env) : Promise.resolve(null),
  ]);
  return {
    nvidia: nvidiaText === null ? null : parseNvidiaSmiGpus(nvidiaText),
    vulkan: vulkanText === null ? null : parseVulkanSummary(vulkanText),
  };
}
