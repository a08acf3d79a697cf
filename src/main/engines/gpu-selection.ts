import type { EngineBackend } from '../../shared/contract/engine';
import { ErrorCode } from '../../shared/errors';
import type { ServerProfile } from '../../shared/contract/server';
import { ALL_GPUS, parseGpuDevices, selectedGpuIndexes } from '../../shared/gpu-devices';
import { AppError } from '../core/errors';
import { gpuIndexOfUuid, vulkanIndexesFor, type GpuIdentities, type NvidiaGpuIdentity } from './gpu-identity';

/**
 * The environment that confines a server to the profile's GPUs (`gpuDevices`), by the indexes
 * nvidia-smi shows. CUDA numbers devices fastest first unless told otherwise; PCI bus order is
 * nvidia-smi's, so with it both mean the same GPUs. ROCm builds (vLLM, SGLang) read
 * HIP_VISIBLE_DEVICES. A Vulkan engine numbers devices in the loader's order, so its choice
 * (GGML_VK_VISIBLE_DEVICES) goes through each GPU's UUID in `identities`; where that match
 * cannot be made, the choice is refused with what to do.
 */
export function gpuSelectionEnv(
  gpuDevices: string | undefined,
  backend: EngineBackend | null,
  identities: GpuIdentities | null = null,
): Record<string, string> {
  const indexes = selectedGpuIndexes(gpuDevices);
  if (indexes === null) return {};
  const chosen = `gpuDevices=${indexes.join(',')}`;
  if (backend === 'cpu')
    throw new AppError(
      ErrorCode.InvalidInput,
      `${chosen}: this engine is a CPU build and runs on no GPU; set gpuDevices=all, or set up a GPU engine (inferlab setup --backend cuda)`,
    );
  if (backend === 'metal')
    throw new AppError(ErrorCode.InvalidInput, `${chosen}: a Metal engine runs on the Mac's one GPU; set gpuDevices=all`);
  if (backend === 'vulkan') {
    const vulkan = vulkanIndexesFor(indexes, identities ?? { nvidia: null, vulkan: null });
    if ('problem' in vulkan)
      throw new AppError(
        ErrorCode.InvalidInput,
        `${chosen}: a Vulkan engine numbers GPUs its own way, and ${vulkan.problem}; set gpuDevices=all and add --device VulkanN to extraFlags (vulkaninfo --summary lists them), and telemetry then counts every GPU`,
      );
    return { GGML_VK_VISIBLE_DEVICES: vulkan.indexes.join(',') };
  }
  const list = indexes.join(',');
  return { CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: list, HIP_VISIBLE_DEVICES: list };
}

/** Whether starting this profile needs the machine's GPU listings (nvidia-smi -L, vulkaninfo) first. */
export function needsGpuIdentities(
  profile: ServerProfile,
  backend: EngineBackend | null,
  environment: NodeJS.ProcessEnv = process.env,
): boolean {
  if (backend === 'vulkan') return selectedGpuIndexes(profile.gpuDevices) !== null;
  const inherited = environment.CUDA_VISIBLE_DEVICES;
  return (profile.gpuDevices ?? ALL_GPUS) === ALL_GPUS && inherited !== undefined && /GPU-/i.test(inherited);
}

/**
 * Checks the chosen GPUs against those this machine lists, before a server is spawned on
 * them: a CUDA process given an index that does not exist sees no GPU and quietly runs on the CPU.
 */
export function assertGpusPresent(gpuDevices: string | undefined, listed: readonly number[] | null): void {
  const indexes = selectedGpuIndexes(gpuDevices);
  if (indexes === null || listed === null) return;
  const missing = indexes.filter((index) => !listed.includes(index));
  if (missing.length > 0)
    throw new AppError(
      ErrorCode.InvalidInput,
      `gpuDevices=${indexes.join(',')}: ${missing.length === 1 ? 'GPU' : 'GPUs'} ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not on this machine; nvidia-smi lists ${listed.length === 0 ? 'none' : listed.join(', ')}`,
    );
}

/**
 * A profile that leaves the GPUs to the environment (`gpuDevices` "all") but is started from
 * a shell that set CUDA_VISIBLE_DEVICES: the server would run on those GPUs while telemetry
 * counted every one. Indexes (read as nvidia-smi's, the order CUDA uses with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID) and GPU UUIDs (whole or a unique prefix, as CUDA takes them,
 * matched against `nvidia-smi -L`) become the profile's choice, so launch, telemetry and the
 * presence check all follow them. A value that hides every GPU is refused: a CUDA server
 * would run on the CPU without a word. MIG instances, UUIDs nvidia-smi does not list, and
 * indexes under CUDA_DEVICE_ORDER=FASTEST_FIRST cannot be mapped to nvidia-smi's indexes:
 * they reach the server unchanged and telemetry counts every GPU. Engines that do not read
 * CUDA's variables ignore them.
 */
export function withInheritedGpuChoice(
  profile: ServerProfile,
  backend: EngineBackend | null,
  environment: NodeJS.ProcessEnv = process.env,
  listedGpus: readonly NvidiaGpuIdentity[] | null = null,
): ServerProfile {
  const inherited = environment.CUDA_VISIBLE_DEVICES;
  if (inherited === undefined || backend === 'cpu' || backend === 'metal' || backend === 'vulkan') return profile;
  if ((profile.gpuDevices ?? ALL_GPUS) !== ALL_GPUS) return profile;
  const trimmed = inherited.trim();
  if (trimmed === '' || trimmed.startsWith('-') || /^nodevfiles$/i.test(trimmed))
    throw new AppError(
      ErrorCode.InvalidInput,
      `CUDA_VISIBLE_DEVICES=${JSON.stringify(inherited)} in inferlab's environment hides every GPU: the server would run on the CPU; unset it, or choose GPUs with gpuDevices (--set devices=0,1)`,
    );
  const indexesInBusOrder = (environment.CUDA_DEVICE_ORDER ?? 'PCI_BUS_ID') === 'PCI_BUS_ID';
  const indexes: number[] = [];
  for (const entry of trimmed.split(',').map((part) => part.trim())) {
    const index = /^\d+$/.test(entry) ? (indexesInBusOrder ? Number(entry) : null) : gpuIndexOfUuid(entry, listedGpus ?? []);
    if (index === null) return profile;
    indexes.push(index);
  }
  const parsed = parseGpuDevices(indexes.join(','));
  return 'indexes' in parsed && parsed.indexes !== null ? { ...profile, gpuDevices: parsed.indexes.join(',') } : profile;
}
