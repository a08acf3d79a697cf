import type { EngineBackend } from '../../shared/contract/engine';
import { ErrorCode } from '../../shared/errors';
import { selectedGpuIndexes } from '../../shared/gpu-devices';
import { AppError } from '../core/errors';

/**
 * The environment that confines a server to the profile's GPUs (`gpuDevices`), by the indexes
 * nvidia-smi shows. CUDA numbers devices fastest first unless told otherwise; PCI bus order is
 * nvidia-smi's, so with it both mean the same GPUs. ROCm builds (vLLM, SGLang) read
 * HIP_VISIBLE_DEVICES. A backend whose numbering is not nvidia-smi's is refused with what to do.
 */
export function gpuSelectionEnv(gpuDevices: string | undefined, backend: EngineBackend | null): Record<string, string> {
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
  if (backend === 'vulkan')
    throw new AppError(
      ErrorCode.InvalidInput,
      `${chosen}: a Vulkan engine numbers GPUs its own way, not as nvidia-smi does; set gpuDevices=all and add --device VulkanN to extraFlags (vulkaninfo --summary lists them), and telemetry then counts every GPU`,
    );
  const list = indexes.join(',');
  return { CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: list, HIP_VISIBLE_DEVICES: list };
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
