import fs from 'node:fs';
import path from 'node:path';
import type { EngineBuildOutcome } from './engine-build';
import type { EnginePlan } from './engine-plan';

/** A GPU build that failed on this machine, kept so that every later setup does not spend minutes failing again. */
export interface FailedGpuBuild {
  /** What was tried: route, backend, CUDA runtime and toolkit, so a changed machine tries again. */
  key: string;
  at: string;
  reason: string;
}

const RECORD_FILE = 'failed-gpu-builds.json';

/** The identity of a plan's attempt: installing cuBLAS or another toolkit changes it, and setup tries again. */
export function gpuBuildKey(plan: EnginePlan, nvcc: string | null): string {
  const runtime = plan.route === 'prebuilt' && plan.cudaRuntime ? `cuda${plan.cudaRuntime.major}` : 'no-runtime';
  const toolkit = plan.route === 'source' && plan.backend === 'cuda' ? (nvcc ?? 'no-nvcc') : '';
  return [plan.route, plan.backend, runtime, toolkit].filter(Boolean).join(':');
}

function readRecords(engineDir: string): FailedGpuBuild[] {
  try {
    const records = JSON.parse(fs.readFileSync(path.join(engineDir, RECORD_FILE), 'utf8')) as unknown;
    return Array.isArray(records) ? records.filter((item): item is FailedGpuBuild => typeof item?.key === 'string') : [];
  } catch {
    return [];
  }
}

function writeRecords(engineDir: string, records: FailedGpuBuild[]): void {
  fs.mkdirSync(engineDir, { recursive: true });
  const file = path.join(engineDir, RECORD_FILE);
  fs.writeFileSync(`${file}.tmp`, JSON.stringify(records, null, 2));
  fs.renameSync(`${file}.tmp`, file);
}

export function readFailedGpuBuild(engineDir: string, key: string): FailedGpuBuild | null {
  return readRecords(engineDir).find((record) => record.key === key) ?? null;
}

/** Every GPU build that failed on this machine, for doctor. */
export function listFailedGpuBuilds(engineDir: string): FailedGpuBuild[] {
  return readRecords(engineDir);
}

/** The part of a build failure that says what is missing: CMake's error block, joined into one line. */
function failureReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const lines = text.split('\n').map((line) => line.trim());
  const cmakeError = lines.findIndex((line) => /^CMake Error/.test(line));
  if (cmakeError >= 0) {
    const end = lines.findIndex((line, index) => index > cmakeError && line === '');
    return lines
      .slice(cmakeError, end < 0 ? cmakeError + 6 : end)
      .join(' ')
      .replace(/\s+/g, ' ');
  }
  return lines.find((line) => /not found|could not find|error/i.test(line)) ?? lines[0] ?? text;
}

export interface GpuFallbackOptions {
  engineDir: string;
  plan: EnginePlan;
  /** The CPU plan for the same machine: what runs when the GPU build cannot be had. */
  cpuPlan: () => EnginePlan;
  nvcc: string | null;
  /** `--backend`: the person asked for this backend, so a failure is theirs to see, not to paper over. */
  explicit: boolean;
  /** `--force`: try the GPU build again even where it failed before. */
  retry: boolean;
  build: (plan: EnginePlan) => Promise<EngineBuildOutcome>;
  log: (line: string) => void;
  signal?: AbortSignal;
}

function cpuWarning(plan: EnginePlan, why: string): string {
  return (
    `THE ENGINE WILL RUN ON THE CPU although this machine was planned for ${plan.backend} (${plan.reason}): ${why}. ` +
    `Every run will record gpu_offload: none. Fix what the build needs, then run \`inferlab setup --backend ${plan.backend}\` to try again.`
  );
}

/**
 * Builds the planned engine; a GPU plan that cannot be built falls back to the CPU engine and
 * says so loudly, so that setup never leaves a GPU machine with nothing to measure with. The
 * failure is remembered per plan, and the next setup goes straight to the CPU engine until
 * the machine changes or the person asks for the GPU build again.
 */
export async function buildWithGpuFallback(options: GpuFallbackOptions): Promise<EngineBuildOutcome> {
  const { plan, engineDir } = options;
  if (plan.backend === 'cpu') return options.build(plan);
  const key = gpuBuildKey(plan, options.nvcc);
  const others = readRecords(engineDir).filter((record) => record.key !== key);
  const onCpu = async (why: string): Promise<EngineBuildOutcome> => {
    const outcome = await options.build(options.cpuPlan());
    return { ...outcome, warnings: [...outcome.warnings, cpuWarning(plan, why)] };
  };

  const earlier = options.explicit || options.retry ? null : readFailedGpuBuild(engineDir, key);
  if (earlier) {
    options.log(`the ${plan.backend} engine failed to build here on ${earlier.at}; using the CPU engine`);
    return onCpu(`its build failed on ${earlier.at}: ${earlier.reason}`);
  }
  try {
    const outcome = await options.build(plan);
    // A retry that worked: the failure on record no longer holds.
    if (readFailedGpuBuild(engineDir, key)) writeRecords(engineDir, others);
    return outcome;
  } catch (error) {
    if (options.signal?.aborted || options.explicit) throw error;
    const reason = failureReason(error);
    writeRecords(engineDir, [...others, { key, at: new Date().toISOString(), reason }]);
    options.log(`the ${plan.backend} engine failed to build: ${reason}`);
    options.log('falling back to the CPU engine');
    return onCpu(`its build failed: ${reason}`);
  }
}
