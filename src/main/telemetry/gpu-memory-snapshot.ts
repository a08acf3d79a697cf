import type { GpuSample } from '../../shared/contract/telemetry';
import { runToCompletion } from '../core/process';
import { findExecutable } from '../core/which';
import { readAmdSmiDocument } from './amd-smi-parse';
import { readGpuMemoryOnce } from './gpu-sampler';
import { gpuQueryOnceArgs, INVALID_QUERY_FIELD, parseGpuLine } from './nvidia-smi-parse';

export interface GpuMemoryReading {
  index: number;
  name: string;
  totalMib: number;
  usedMib: number;
}

export interface GpuMemorySnapshot {
  gpus: GpuMemoryReading[];
  /** Which tool answered, or why none did. */
  source: string;
}

const TIMEOUT_MS = 10_000;

function complete(samples: ReturnType<typeof parseGpuLine>[]): GpuMemoryReading[] {
  return samples
    .filter((sample) => sample !== null && sample.memoryTotalMib !== null && sample.memoryUsedMib !== null)
    .map((sample) => ({
      index: sample!.index,
      name: sample!.name ?? `GPU ${sample!.index}`,
      totalMib: sample!.memoryTotalMib!,
      usedMib: sample!.memoryUsedMib!,
    }));
}

async function readNvidia(binary: string): Promise<GpuMemorySnapshot> {
  let run = await runToCompletion(binary, gpuQueryOnceArgs(), { timeoutMs: TIMEOUT_MS });
  // Drivers that do not know the newest fields refuse the whole query.
  if (run.code !== 0 && INVALID_QUERY_FIELD.test(run.output))
    run = await runToCompletion(binary, gpuQueryOnceArgs(false), { timeoutMs: TIMEOUT_MS });
  if (run.code !== 0) return { gpus: [], source: `nvidia-smi failed (exit ${run.code}): ${run.output.trim().split('\n')[0] ?? ''}` };
  const gpus = complete(run.output.split('\n').map((line) => parseGpuLine(line, 0)));
  return { gpus, source: gpus.length > 0 ? 'nvidia-smi' : 'nvidia-smi listed no GPU with a memory reading' };
}

/** The readings of amd-smi's JSON, after any banner or command line printed before it; throws on no JSON. */
function amdSmiSamples(output: string): GpuSample[] {
  return readAmdSmiDocument(JSON.parse(output.slice(Math.max(0, output.search(/[[{]/)))), 0).samples;
}

async function readAmd(binary: string): Promise<GpuMemorySnapshot> {
  const run = await runToCompletion(binary, ['metric', '--json'], { timeoutMs: TIMEOUT_MS });
  if (run.code !== 0) return { gpus: [], source: `amd-smi failed (exit ${run.code})` };
  try {
    const gpus = complete(amdSmiSamples(run.output));
    return { gpus, source: gpus.length > 0 ? 'amd-smi' : 'amd-smi listed no GPU with a memory reading' };
  } catch (error) {
    return { gpus: [], source: `amd-smi printed no JSON: ${(error as Error).message}` };
  }
}

/** Each GPU's total and used memory now, from nvidia-smi or amd-smi; no GPUs, with the reason, where neither answers. */
export async function readGpuMemorySnapshot(): Promise<GpuMemorySnapshot> {
  const nvidia = findExecutable('nvidia-smi');
  const amd = findExecutable('amd-smi');
  try {
    if (nvidia) return await readNvidia(nvidia);
    if (amd) return await readAmd(amd);
  } catch (error) {
    return { gpus: [], source: `the GPU tool could not run: ${(error as Error).message}` };
  }
  return { gpus: [], source: 'neither nvidia-smi nor amd-smi found' };
}

/**
 * Used memory per GPU index now, and the tool whose indexes they are: nvidia-smi, else amd-smi
 * (a GPU whose reading is not a number is listed with null). Null where neither answers. What a
 * server's chosen GPUs are checked against, and its footprint measured from, before it starts.
 */
export async function readGpuUsedOnce(): Promise<{ used: ReadonlyMap<number, number | null>; tool: 'nvidia-smi' | 'amd-smi' } | null> {
  const nvidia = findExecutable('nvidia-smi');
  if (nvidia) {
    const used = await readGpuMemoryOnce(nvidia);
    return used && { used, tool: 'nvidia-smi' };
  }
  const amd = findExecutable('amd-smi');
  if (!amd) return null;
  const run = await runToCompletion(amd, ['metric', '--mem-usage', '--json'], { timeoutMs: 5000 }).catch(() => null);
  if (!run || run.code !== 0) return null;
  try {
    const samples = amdSmiSamples(run.output);
    return samples.length > 0 ? { used: new Map(samples.map((sample) => [sample.index, sample.memoryUsedMib])), tool: 'amd-smi' } : null;
  } catch {
    return null;
  }
}
