/**
 * Where a llama.cpp server put the model's weights, from the buffer sizes its log prints per
 * device ("CUDA0 model", "CPU_Mapped model", "Radeon RX 570 Series model", ...).
 *
 * Host memory is every CPU buffer (CPU, CPU_Mapped, CPU_REPACK, AMX, ...) and every pinned
 * host buffer a GPU backend allocates (CUDA_Host, ROCm_Host, Vulkan_Host, ...). Metal's
 * buffers are GPU memory: on Apple silicon the GPU reads them directly.
 */
export interface WeightPlacement {
  /** Weight bytes per device, largest first. */
  devices: { device: string; mib: number; host: boolean }[];
  host_mib: number;
  gpu_mib: number;
  /**
   * Host weight bytes expected even when every layer is offloaded: llama.cpp keeps the input
   * token-embedding table (n_vocab × n_embd) in host memory, bounded here at 2 bytes a weight.
   * Null when the log did not give the table's shape; a tenth of the weights is allowed then.
   */
  embedding_allowance_mib: number | null;
}

/** The input token-embedding table's shape, from the log's metadata (n_vocab, n_embd). */
export interface InputEmbeddingShape {
  vocabulary: number;
  width: number;
}

const HOST_DEVICE = /^(CPU|AMX)|_Host$/i;
/** Share of the weights allowed in host memory when the embedding table's shape is unknown. */
const UNKNOWN_SHAPE_HOST_SHARE = 0.1;

export function isHostDevice(device: string): boolean {
  return HOST_DEVICE.test(device);
}

/** Null when the log named no weight ("model") buffers. */
export function weightPlacement(buffersMib: Record<string, number>, embedding: InputEmbeddingShape | null): WeightPlacement | null {
  const devices = Object.entries(buffersMib)
    .filter(([key]) => key.endsWith(' model'))
    .map(([key, mib]) => {
      const device = key.slice(0, -' model'.length);
      return { device, mib, host: isHostDevice(device) };
    })
    .sort((a, b) => b.mib - a.mib);
  if (devices.length === 0) return null;
  const sum = (host: boolean) => devices.filter((entry) => entry.host === host).reduce((total, entry) => total + entry.mib, 0);
  return {
    devices,
    host_mib: sum(true),
    gpu_mib: sum(false),
    embedding_allowance_mib: embedding ? (embedding.vocabulary * embedding.width * 2) / 2 ** 20 : null,
  };
}

/** The share of the weights in host memory, 0 to 1. */
export function hostShare(placement: WeightPlacement): number {
  const total = placement.host_mib + placement.gpu_mib;
  return total === 0 ? 0 : placement.host_mib / total;
}

/** Whether more weight bytes sit in host memory than llama.cpp keeps there by design with every layer on the GPU. */
export function weightsBeyondEmbeddingInHost(placement: WeightPlacement): boolean {
  if (placement.gpu_mib === 0) return placement.host_mib > 0;
  const allowance = placement.embedding_allowance_mib ?? UNKNOWN_SHAPE_HOST_SHARE * (placement.host_mib + placement.gpu_mib);
  return placement.host_mib > allowance;
}

/** "CUDA0 5434 MiB, CPU 1641 MiB (host)": the devices, largest first. */
export function placementText(placement: WeightPlacement): string {
  return placement.devices
    .map((entry) => `${entry.device} ${entry.mib >= 10 ? entry.mib.toFixed(0) : entry.mib.toFixed(2)} MiB${entry.host ? ' (host)' : ''}`)
    .join(', ');
}
