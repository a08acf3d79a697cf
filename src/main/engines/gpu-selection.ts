import type { EngineBackend } from '../../shared/contract/engine';
import { ErrorCode } from '../../shared/errors';
import type { ServerProfile } from '../../shared/contract/server';
import { ALL_GPUS, parseGpuDevices, selectedGpuIndexes } from '../../shared/gpu-devices';
import type { EnvChanges } from '../core/child-env';
import { AppError } from '../core/errors';
import { gpuIndexOfUuid, vulkanIndexesFor, type AmdGpuIdentity, type GpuIdentities, type NvidiaGpuIdentity } from './gpu-identity';
import { amdIndexesOfShell, listedAmd, rocmPin } from './rocm-devices';

/**
 * The environment that confines a server to the profile's GPUs (`gpuDevices`), by the indexes
 * nvidia-smi (or amd-smi) shows. CUDA numbers devices fastest first unless told otherwise; PCI
 * bus order is nvidia-smi's, so with it both mean the same GPUs. ROCm builds (vLLM, SGLang, a
 * llama-server built for HIP) get, through amd-smi's list (`identities.amd`), HIP_VISIBLE_DEVICES
 * in ROCm's numbers where HIP's order is known, else ROCR_VISIBLE_DEVICES pinned by UUID or KFD
 * node (rocm-devices.ts); the shell's other ROCm variables are withheld, since each filters what
 * the one before left. A Vulkan engine numbers devices in the
 * loader's order, so its choice (GGML_VK_VISIBLE_DEVICES) goes through each GPU's UUID in
 * `identities`; where that match cannot be made, the choice is refused with what to do.
 */
export function gpuSelectionEnv(
  gpuDevices: string | undefined,
  backend: EngineBackend | null,
  identities: GpuIdentities | null = null,
): EnvChanges {
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
  // On an AMD machine (amd-smi lists the GPUs, nvidia-smi none) an engine of unknown build may be a ROCm build.
  const rocm = backend === null && !identities?.nvidia?.length ? rocmPin(indexes, identities?.amd) : null;
  if (rocm?.variable === 'ROCR_VISIBLE_DEVICES')
    return {
      CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
      CUDA_VISIBLE_DEVICES: null,
      HIP_VISIBLE_DEVICES: null,
      ROCR_VISIBLE_DEVICES: rocm.value,
      GPU_DEVICE_ORDINAL: null,
    };
  const list = rocm?.value ?? indexes.join(',');
  return {
    CUDA_DEVICE_ORDER: 'PCI_BUS_ID',
    CUDA_VISIBLE_DEVICES: list,
    HIP_VISIBLE_DEVICES: list,
    ROCR_VISIBLE_DEVICES: null,
    GPU_DEVICE_ORDINAL: null,
  };
}

/** Whether starting this profile needs the machine's GPU listings (nvidia-smi -L, vulkaninfo, amd-smi list) first. */
export function needsGpuIdentities(
  profile: ServerProfile,
  backend: EngineBackend | null,
  environment: NodeJS.ProcessEnv = process.env,
): boolean {
  if (backend === 'vulkan') return selectedGpuIndexes(profile.gpuDevices) !== null;
  // A server that may be a ROCm build: its GPU numbers are ROCm's, which amd-smi's list maps.
  if (backend === null && (selectedGpuIndexes(profile.gpuDevices) !== null || readsRocmChoice(environment))) return true;
  const inherited = environment.CUDA_VISIBLE_DEVICES;
  return (profile.gpuDevices ?? ALL_GPUS) === ALL_GPUS && inherited !== undefined && /GPU-/i.test(inherited);
}

/**
 * Checks the chosen GPUs against those this machine lists, before a server is spawned on
 * them: a CUDA process given an index that does not exist sees no GPU and quietly runs on the CPU.
 */
export function assertGpusPresent(
  gpuDevices: string | undefined,
  listed: readonly number[] | null,
  tool: 'nvidia-smi' | 'amd-smi' = 'nvidia-smi',
): void {
  const indexes = selectedGpuIndexes(gpuDevices);
  if (indexes === null || listed === null) return;
  const missing = indexes.filter((index) => !listed.includes(index));
  if (missing.length > 0)
    throw new AppError(
      ErrorCode.InvalidInput,
      `gpuDevices=${indexes.join(',')}: ${missing.length === 1 ? 'GPU' : 'GPUs'} ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not on this machine; ${tool} lists ${listed.length === 0 ? 'none' : listed.join(', ')}`,
    );
}

/**
 * A profile that leaves the GPUs to the environment (`gpuDevices` "all") but is started from
 * a shell that set CUDA_VISIBLE_DEVICES (or, for a ROCm build, ROCR_VISIBLE_DEVICES and
 * HIP_VISIBLE_DEVICES): the server would run on those GPUs while telemetry counted every one.
 * The variables become the profile's choice, so launch, telemetry and the presence check all
 * follow them. A value that hides every GPU is refused: the server would run on the CPU
 * without a word. What cannot be mapped to the machine's own GPU numbers reaches the server
 * unchanged, and telemetry counts every GPU. Engines that read neither ignore them. ROCm's
 * numbers and UUIDs become amd-smi's indexes through `amdGpus` (amd-smi's list), where it maps them.
 */
export function withInheritedGpuChoice(
  profile: ServerProfile,
  backend: EngineBackend | null,
  environment: NodeJS.ProcessEnv = process.env,
  listedGpus: readonly NvidiaGpuIdentity[] | null = null,
  amdGpus: readonly AmdGpuIdentity[] | null = null,
): ServerProfile {
  if (backend === 'cpu' || backend === 'metal' || backend === 'vulkan') return profile;
  if ((profile.gpuDevices ?? ALL_GPUS) !== ALL_GPUS) return profile;
  // Only an engine of unknown build (a Python server, a llama-server Infer Lab did not build) may be a ROCm build.
  const indexes =
    backend === null && readsRocmChoice(environment)
      ? inheritedRocmChoice(environment, amdGpus)
      : inheritedCudaIndexes(environment, listedGpus);
  if (indexes === null) return profile;
  const parsed = parseGpuDevices(indexes.join(','));
  return 'indexes' in parsed && parsed.indexes !== null ? { ...profile, gpuDevices: parsed.indexes.join(',') } : profile;
}

/**
 * CUDA_VISIBLE_DEVICES as nvidia-smi's indexes: indexes (the order CUDA uses with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID) and GPU UUIDs (whole or a unique prefix, as CUDA takes them,
 * matched against `nvidia-smi -L`). MIG instances, UUIDs nvidia-smi does not list, and indexes
 * under CUDA_DEVICE_ORDER=FASTEST_FIRST cannot be mapped: null.
 */
function inheritedCudaIndexes(environment: NodeJS.ProcessEnv, listedGpus: readonly NvidiaGpuIdentity[] | null): number[] | null {
  const entries = visibleEntries(environment, 'CUDA_VISIBLE_DEVICES');
  if (entries === null) return null;
  const indexesInBusOrder = (environment.CUDA_DEVICE_ORDER ?? 'PCI_BUS_ID') === 'PCI_BUS_ID';
  const indexes: number[] = [];
  for (const entry of entries) {
    const index = /^\d+$/.test(entry) ? (indexesInBusOrder ? Number(entry) : null) : gpuIndexOfUuid(entry, listedGpus ?? []);
    if (index === null) return null;
    indexes.push(index);
  }
  return indexes;
}

function readsRocmChoice(environment: NodeJS.ProcessEnv): boolean {
  return environment.ROCR_VISIBLE_DEVICES !== undefined || environment.HIP_VISIBLE_DEVICES !== undefined;
}

/**
 * ROCm's two filters as amd-smi's indexes. ROCR_VISIBLE_DEVICES picks from the machine's GPUs
 * first; HIP_VISIBLE_DEVICES (CUDA_VISIBLE_DEVICES where it is unset) then picks from what ROCR
 * left. With amd-smi's list both are mapped to the GPUs they name (rocm-devices.ts); without
 * it, numbers are taken as amd-smi's. GPU_DEVICE_ORDINAL (a third filter, for OpenCL too)
 * cannot be mapped: null.
 */
function inheritedRocmChoice(environment: NodeJS.ProcessEnv, amdGpus: readonly AmdGpuIdentity[] | null): number[] | null {
  const rocr = visibleEntries(environment, 'ROCR_VISIBLE_DEVICES');
  const hipVariable = environment.HIP_VISIBLE_DEVICES !== undefined ? 'HIP_VISIBLE_DEVICES' : 'CUDA_VISIBLE_DEVICES';
  const hip = visibleEntries(environment, hipVariable);
  if (environment.GPU_DEVICE_ORDINAL !== undefined) return null;
  const gpus = listedAmd(amdGpus);
  if (gpus) return amdIndexesOfShell(rocr, hip === null ? null : { variable: hipVariable, entries: hip }, gpus);
  return rocmNumbers(rocr, hip, hipVariable);
}

/** Without amd-smi's list: ROCR's numbers, then HIP's within them, taken as amd-smi's; null for a UUID. */
function rocmNumbers(rocr: string[] | null, hip: string[] | null, hipVariable: string): number[] | null {
  const numbers = (entries: readonly string[] | null) =>
    entries === null ? null : entries.every((entry) => /^\d+$/.test(entry)) ? entries.map(Number) : undefined;
  const machine = numbers(rocr);
  const withinRocr = numbers(hip);
  if (machine === undefined || withinRocr === undefined) return null;
  if (withinRocr === null) return machine;
  if (machine === null) return withinRocr;
  const beyond = withinRocr.filter((position) => position >= machine.length);
  if (beyond.length > 0)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${hipVariable}=${withinRocr.join(',')} counts only the ${machine.length} GPU${machine.length === 1 ? '' : 's'} that ROCR_VISIBLE_DEVICES=${machine.join(',')} leaves visible, so ${beyond.join(', ')} names none; use indexes below ${machine.length}, or unset one of the two`,
    );
  return withinRocr.map((position) => machine[position]!);
}

/** A visibility variable's entries; null when unset. A value that hides every GPU is refused. */
function visibleEntries(environment: NodeJS.ProcessEnv, name: string): string[] | null {
  const value = environment[name];
  if (value === undefined) return null;
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.startsWith('-') || /^nodevfiles$/i.test(trimmed))
    throw new AppError(
      ErrorCode.InvalidInput,
      `${name}=${JSON.stringify(value)} in inferlab's environment hides every GPU: the server would run on the CPU; unset it, or choose GPUs with gpuDevices (--set devices=0,1)`,
    );
  return trimmed.split(',').map((part) => part.trim());
}
