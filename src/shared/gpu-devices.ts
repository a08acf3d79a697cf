/**
 * The `gpuDevices` profile field: "all", or GPU indexes as nvidia-smi and amd-smi number them
 * ("0,1"), the same indexes the run's telemetry records as gpu0, gpu1, …
 */
export const ALL_GPUS = 'all';
const MAX_GPU_INDEX = 63;

/** The chosen indexes, sorted; null for every GPU; a problem string for text that is neither. */
export function parseGpuDevices(text: string): { indexes: number[] | null } | { problem: string } {
  const trimmed = text.trim();
  if (trimmed === ALL_GPUS || trimmed === '') return { indexes: null };
  const parts = trimmed.split(',').map((part) => part.trim());
  if (!parts.every((part) => /^\d{1,2}$/.test(part) && Number(part) <= MAX_GPU_INDEX))
    return {
      problem: `gpuDevices must be "all" or GPU indexes from 0 to ${MAX_GPU_INDEX} as nvidia-smi numbers them, separated by commas (e.g. 0,1); got ${JSON.stringify(text)}`,
    };
  const indexes = parts.map(Number);
  if (new Set(indexes).size !== indexes.length) return { problem: `gpuDevices lists a GPU twice: ${JSON.stringify(text)}` };
  return { indexes: indexes.sort((a, b) => a - b) };
}

/** The chosen indexes of a valid field (null for every GPU); an invalid field never reaches a launch. */
export function selectedGpuIndexes(text: string | undefined): number[] | null {
  const parsed = parseGpuDevices(text ?? ALL_GPUS);
  return 'indexes' in parsed ? parsed.indexes : null;
}
