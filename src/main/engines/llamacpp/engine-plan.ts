import type { EngineBackend } from '../../../shared/contract/engine';
import type { VulkanDevice } from '../gpu-identity';
import { compositionFor, type PrebuiltComposition } from './prebuilt-packages';

/** What the machine offers an engine; gathered by machine-probe.ts, decided on here. */
export interface MachineFacts {
  platform: NodeJS.Platform;
  arch: string;
  /** Null when nvidia-smi is absent or lists no GPU. */
  nvidia: NvidiaFacts | null;
  /** The CUDA runtimes whose libraries were all found, newest first. */
  cudaRuntimes: CudaRuntime[];
  /** Vulkan devices from `vulkaninfo --summary`; null when vulkaninfo or the loader is missing. */
  vulkanDevices: VulkanDevice[] | null;
  nvcc: string | null;
  /** macOS's version (`sw_vers -productVersion`, "14.6.1"); null elsewhere or where it cannot be read. */
  macosVersion?: string | null;
}

export interface NvidiaFacts {
  gpus: string[];
  driverVersion: string | null;
  /** The newest CUDA version the driver supports ("CUDA Version" in nvidia-smi's header). */
  driverCudaVersion: string | null;
}

export interface CudaRuntime {
  major: 12 | 13;
  /** Library file name → absolute path, for every name in CUDA_RUNTIME_LIBRARIES. */
  libraries: Record<string, string>;
}

/** What the prebuilt CUDA backend loads beside the driver's libcuda.so.1. */
export const CUDA_RUNTIME_LIBRARIES = (major: number): string[] => [
  `libcudart.so.${major}`,
  `libcublas.so.${major}`,
  `libcublasLt.so.${major}`,
];

export type EnginePlan =
  | {
      route: 'prebuilt';
      backend: EngineBackend;
      composition: PrebuiltComposition;
      cudaRuntime: CudaRuntime | null;
      reason: string;
      warnings: string[];
    }
  | { route: 'source'; backend: EngineBackend; reason: string; warnings: string[] };

export interface PlanOptions {
  /** `--backend`: the backend the person asked for. */
  backend?: EngineBackend;
  /** `--from-source`: skip the prebuilt libraries. */
  fromSource?: boolean;
}

function majorOf(version: string | null): number | null {
  const major = version ? Number.parseInt(version, 10) : Number.NaN;
  return Number.isFinite(major) ? major : null;
}

/**
 * The newest CUDA runtime found that the driver can run. A driver that names no CUDA version
 * ("CUDA Version: N/A": its user-mode CUDA library is missing) can run none.
 */
function usableCudaRuntime(facts: MachineFacts): CudaRuntime | null {
  const driverMajor = majorOf(facts.nvidia?.driverCudaVersion ?? null);
  if (driverMajor === null) return null;
  return facts.cudaRuntimes.find((runtime) => runtime.major <= driverMajor) ?? null;
}

/** Vulkan's device types from most to least worth measuring: a laptop lists its integrated GPU first. */
const VULKAN_PREFERENCE = ['DISCRETE_GPU', 'INTEGRATED_GPU', 'VIRTUAL_GPU'];

/** The Vulkan GPU an engine should run on: a discrete one over an integrated one, never a software renderer. */
export function realVulkanGpu(facts: MachineFacts): VulkanDevice | null {
  const gpus = (facts.vulkanDevices ?? []).filter((device) => /GPU/.test(device.type));
  const rank = (device: VulkanDevice) => {
    const index = VULKAN_PREFERENCE.findIndex((type) => device.type.endsWith(type));
    return index < 0 ? VULKAN_PREFERENCE.length : index;
  };
  return [...gpus].sort((a, b) => rank(a) - rank(b))[0] ?? null;
}

function missingCudaRuntime(facts: MachineFacts): string {
  const found = facts.cudaRuntimes.map((runtime) => `CUDA ${runtime.major}`).join(', ');
  const driverCuda = facts.nvidia?.driverCudaVersion ?? null;
  const install = "(install NVIDIA's cuda-cudart and libcublas packages, or `pip install nvidia-cuda-runtime-cu12 nvidia-cublas-cu12`)";
  if (facts.nvidia && !driverCuda) {
    const noDriverCuda = "nvidia-smi names no CUDA version, so the driver's CUDA library (libcuda.so.1) is missing or does not load";
    return found
      ? `the ${found} runtime was found, but ${noDriverCuda} (reinstall the NVIDIA driver with its CUDA library)`
      : `no CUDA 13 or 12 runtime libraries were found (${CUDA_RUNTIME_LIBRARIES(13).join(', ')} or their .12 versions), and ${noDriverCuda} ${install}`;
  }
  const driver = driverCuda ? `; the driver supports CUDA up to ${driverCuda}` : '';
  const what = found
    ? `only the ${found} runtime was found, newer than the driver${driver}`
    : `no CUDA 13 or 12 runtime libraries were found (${CUDA_RUNTIME_LIBRARIES(13).join(', ')} or their .12 versions)${driver}`;
  return `${what} ${install}`;
}

function cpuOnGpuWarning(facts: MachineFacts, why: string): string {
  return `THIS MACHINE HAS AN NVIDIA GPU (${facts.nvidia!.gpus.join(', ')}) BUT THE ENGINE WILL RUN ON THE CPU: ${why}. Every run will record gpu_offload: none.`;
}

/** The platforms node-llama-cpp publishes backend libraries for that the prebuilt route can compile against. */
const PREBUILT_PLATFORMS: readonly NodeJS.Platform[] = ['linux', 'darwin'];

/** The oldest macOS the packages' libraries load on: their Mach-O headers say minos 14.0. */
const MAC_PREBUILT_MIN_MAJOR = 14;

/** Why this Mac cannot load the prebuilt libraries, or null where it can (or its version is unknown: then the smoke test tells). */
function macTooOld(facts: MachineFacts): string | null {
  if (facts.platform !== 'darwin' || !facts.macosVersion) return null;
  const major = majorOf(facts.macosVersion);
  if (major === null || major >= MAC_PREBUILT_MIN_MAJOR) return null;
  return `the prebuilt macOS libraries need macOS ${MAC_PREBUILT_MIN_MAJOR} or newer and this is macOS ${facts.macosVersion}, so building from source`;
}

type PlanMakers = {
  source: (backend: EngineBackend, reason: string) => EnginePlan;
  prebuilt: (backend: EngineBackend, reason: string) => EnginePlan;
};

/**
 * A Mac: Apple Silicon gets the Metal package; an Intel Mac gets the CPU package, which is all
 * node-llama-cpp publishes for it, and is told how to build Metal from source instead. A source
 * build (asked for, or a macOS too old for the packages) builds Metal, as it always did.
 */
function planMac(facts: MachineFacts, options: PlanOptions, make: PlanMakers): EnginePlan {
  const appleSilicon = facts.arch === 'arm64';
  if (options.fromSource) return make.source('metal', '--from-source on macOS: the Metal backend');
  const tooOld = macTooOld(facts);
  if (tooOld) return make.source('metal', tooOld);
  if (appleSilicon) return make.prebuilt('metal', 'Apple Silicon: the Metal backend');
  const plan = make.prebuilt('cpu', `Intel Mac (${facts.arch}): the only prebuilt macOS package for it is a CPU build`);
  plan.warnings.push(
    'THE ENGINE WILL RUN ON THE CPU: node-llama-cpp publishes no Metal build for Intel Macs. `inferlab setup --backend metal` builds the Metal backend from source. Every run will record gpu_offload: none.',
  );
  return plan;
}

/**
 * Decides which engine setup builds: prebuilt backend libraries where a package fits
 * (NVIDIA driver and CUDA runtime → CUDA; a Vulkan GPU → Vulkan; Apple Silicon → Metal; CPU
 * otherwise), the full source build where none does. A GPU machine that ends up with a CPU
 * engine always gets a warning that says why.
 */
export function planEngine(facts: MachineFacts, options: PlanOptions = {}): EnginePlan {
  const warnings: string[] = [];
  const source = (backend: EngineBackend, reason: string): EnginePlan => ({ route: 'source', backend, reason, warnings });
  const prebuilt = (backend: EngineBackend, reason: string, cudaRuntime: CudaRuntime | null = null): EnginePlan => {
    const composition = compositionFor(backend, facts.platform, facts.arch, cudaRuntime?.major ?? null);
    if (!composition)
      return source(backend, `${reason}; no prebuilt ${backend} libraries for ${facts.platform}-${facts.arch}, so building from source`);
    return { route: 'prebuilt', backend, composition, cudaRuntime, reason, warnings };
  };

  if (options.backend) {
    const forced = options.backend;
    if (options.fromSource || !PREBUILT_PLATFORMS.includes(facts.platform)) return source(forced, `forced with --backend ${forced}`);
    const tooOld = macTooOld(facts);
    if (tooOld) return source(forced, `forced with --backend ${forced}; ${tooOld}`);
    if (forced === 'cuda' && facts.platform === 'linux') {
      const runtime = usableCudaRuntime(facts);
      if (runtime) return prebuilt('cuda', `forced with --backend cuda; CUDA ${runtime.major} runtime found`, runtime);
      return source('cuda', `forced with --backend cuda, but ${missingCudaRuntime(facts)}; building from source with nvcc instead`);
    }
    return prebuilt(forced, `forced with --backend ${forced}`);
  }

  if (facts.platform === 'darwin') return planMac(facts, options, { source, prebuilt });
  if (facts.platform !== 'linux')
    return source('cpu', `prebuilt backend libraries are used on Linux and macOS only, not ${facts.platform}`);

  if (facts.nvidia) {
    const gpus = facts.nvidia.gpus.join(', ');
    const runtime = usableCudaRuntime(facts);
    if (options.fromSource) {
      if (facts.nvcc) return source('cuda', `--from-source, with nvcc at ${facts.nvcc} and an NVIDIA GPU (${gpus})`);
      warnings.push(cpuOnGpuWarning(facts, '--from-source without the CUDA toolkit (nvcc) builds the CPU backend only'));
      return source('cpu', '--from-source, and no CUDA toolkit (nvcc) to build CUDA with');
    }
    if (runtime) return prebuilt('cuda', `NVIDIA GPU (${gpus}) with the CUDA ${runtime.major} runtime`, runtime);
    const why = missingCudaRuntime(facts);
    const vulkanGpu = realVulkanGpu(facts);
    if (vulkanGpu) {
      warnings.push(`Using the Vulkan backend on ${vulkanGpu.name}, not CUDA: ${why}.`);
      return prebuilt('vulkan', `NVIDIA GPU (${gpus}) without a CUDA runtime, Vulkan device ${vulkanGpu.name}`);
    }
    if (facts.nvcc) return source('cuda', `NVIDIA GPU (${gpus}) and nvcc, but ${why}; building CUDA from source`);
    warnings.push(cpuOnGpuWarning(facts, why));
    return prebuilt('cpu', `NVIDIA GPU (${gpus}) but no CUDA runtime, Vulkan device or CUDA toolkit`);
  }

  const vulkanGpu = realVulkanGpu(facts);
  if (options.fromSource) return source('cpu', '--from-source');
  if (vulkanGpu) return prebuilt('vulkan', `Vulkan device ${vulkanGpu.name} (${vulkanGpu.type})`);
  return prebuilt('cpu', 'no NVIDIA GPU and no Vulkan GPU found');
}
