import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planEngine, type CudaRuntime, type MachineFacts } from '../../src/main/engines/llamacpp/engine-plan';
import {
  findCudaRuntimes,
  parseLdconfigCache,
  parseNvidiaSmiHeader,
  parseNvidiaSmiList,
} from '../../src/main/engines/llamacpp/machine-probe';
import { parseVulkanSummary } from '../../src/main/engines/gpu-identity';
import { useTempDirs } from '../support/temp';

const fixture = (name: string) => fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'machines', name), 'utf8');
const tempDir = useTempDirs();

function runtime(major: 12 | 13): CudaRuntime {
  return {
    major,
    libraries: Object.fromEntries(
      ['libcudart', 'libcublas', 'libcublasLt'].map((name) => [`${name}.so.${major}`, `/opt/cuda/${name}.so.${major}`]),
    ),
  };
}

function machine(overrides: Partial<MachineFacts> = {}): MachineFacts {
  return { platform: 'linux', arch: 'x64', nvidia: null, cudaRuntimes: [], vulkanDevices: null, nvcc: null, ...overrides };
}

const h200 = {
  gpus: parseNvidiaSmiList(fixture('nvidia-smi-L-two.txt')).slice(0, 1),
  ...parseNvidiaSmiHeader(fixture('nvidia-smi-h200.txt')),
};
const rtx4090 = { gpus: ['NVIDIA GeForce RTX 4090'], ...parseNvidiaSmiHeader(fixture('nvidia-smi-rtx4090-cuda12.txt')) };

describe('reading the machine', () => {
  it('reads GPU names, driver and CUDA versions from nvidia-smi', () => {
    expect(parseNvidiaSmiList(fixture('nvidia-smi-L-two.txt'))).toEqual(['NVIDIA H200', 'NVIDIA GeForce RTX 4090']);
    expect(parseNvidiaSmiHeader(fixture('nvidia-smi-h200.txt'))).toEqual({ driverVersion: '580.95.05', driverCudaVersion: '13.0' });
    expect(parseNvidiaSmiHeader(fixture('nvidia-smi-rtx4090-cuda12.txt')).driverCudaVersion).toBe('12.4');
    expect(parseNvidiaSmiList('No devices were found\n')).toEqual([]);
  });

  it('reads Vulkan devices with their types, software renderers included', () => {
    expect(parseVulkanSummary(fixture('vulkaninfo-nvidia-and-llvmpipe.txt'))).toEqual([
      { index: 0, name: 'NVIDIA GeForce RTX 4090', type: 'PHYSICAL_DEVICE_TYPE_DISCRETE_GPU', uuid: null },
      { index: 1, name: 'llvmpipe (LLVM 15.0.6, 256 bits)', type: 'PHYSICAL_DEVICE_TYPE_CPU', uuid: null },
    ]);
    expect(parseVulkanSummary('')).toEqual([]);
  });

  it('takes 64-bit libraries from the loader cache and ignores 32-bit copies', () => {
    const cache = parseLdconfigCache(fixture('ldconfig-cuda13.txt'));
    expect(cache.get('libcudart.so.13')).toBe('/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13');
    expect(cache.get('libc.so.6')).toBe('/lib/x86_64-linux-gnu/libc.so.6');
  });

  it('finds a CUDA runtime only when every library it needs is present', () => {
    const pip = tempDir();
    for (const name of ['libcudart.so.12', 'libcublas.so.12', 'libcublasLt.so.12', 'libcudart.so.13'])
      fs.writeFileSync(path.join(pip, name), '');
    const runtimes = findCudaRuntimes(new Map(), [path.join(pip, 'missing'), pip]);
    expect(runtimes.map((found) => found.major)).toEqual([12]);
    expect(runtimes[0]!.libraries['libcublasLt.so.12']).toBe(path.join(pip, 'libcublasLt.so.12'));
    // A loader-cache entry whose file is gone does not count.
    const stale = parseLdconfigCache(fixture('ldconfig-cuda13.txt'));
    expect(findCudaRuntimes(stale, [])).toEqual([]);
  });
});

describe('the engine plan', () => {
  it('builds on the CPU package where there is no GPU', () => {
    const plan = planEngine(machine({ vulkanDevices: parseVulkanSummary(fixture('vulkaninfo-llvmpipe-only.txt')) }));
    expect(plan).toMatchObject({ route: 'prebuilt', backend: 'cpu', composition: { main: 'linux-x64', extras: [] }, warnings: [] });
  });

  it('uses the CUDA 13 package when the driver and the runtime are both CUDA 13, with no toolkit', () => {
    const plan = planEngine(machine({ nvidia: h200, cudaRuntimes: [runtime(13), runtime(12)] }));
    expect(plan).toMatchObject({ route: 'prebuilt', backend: 'cuda', composition: { main: 'linux-x64-cuda', extras: [] } });
    expect(plan.route === 'prebuilt' && plan.cudaRuntime?.major).toBe(13);
    expect(plan.warnings).toEqual([]);
  });

  it('takes the CUDA 12 backend library when the driver supports only CUDA 12', () => {
    const plan = planEngine(machine({ nvidia: rtx4090, cudaRuntimes: [runtime(13), runtime(12)] }));
    expect(plan.route === 'prebuilt' && plan.cudaRuntime?.major).toBe(12);
    expect(plan.route === 'prebuilt' && plan.composition.extras.map((extra) => extra.key)).toEqual(['linux-x64-cuda-ext']);
  });

  it('does not pick a CUDA runtime newer than the driver', () => {
    const plan = planEngine(machine({ nvidia: rtx4090, cudaRuntimes: [runtime(13)] }));
    expect(plan.backend).toBe('cpu');
    expect(plan.warnings.join()).toMatch(/only the CUDA 13 runtime was found, newer than the driver/);
    expect(plan.warnings.join()).toMatch(/the driver supports CUDA up to 12\.4/);
  });

  it('says loudly that a GPU machine without a CUDA runtime, Vulkan or nvcc gets a CPU engine', () => {
    const plan = planEngine(machine({ nvidia: h200, vulkanDevices: parseVulkanSummary(fixture('vulkaninfo-llvmpipe-only.txt')) }));
    expect(plan).toMatchObject({ route: 'prebuilt', backend: 'cpu' });
    expect(plan.warnings).toHaveLength(1);
    expect(plan.warnings[0]).toMatch(/^THIS MACHINE HAS AN NVIDIA GPU \(NVIDIA H200\) BUT THE ENGINE WILL RUN ON THE CPU/);
    expect(plan.warnings[0]).toMatch(/libcudart\.so\.13.*pip install nvidia-cuda-runtime-cu12/);
    expect(plan.warnings[0]).toMatch(/gpu_offload: none/);
  });

  it('prefers Vulkan to the CPU on an NVIDIA machine without the CUDA runtime, and says why', () => {
    const plan = planEngine(machine({ nvidia: rtx4090, vulkanDevices: parseVulkanSummary(fixture('vulkaninfo-nvidia-and-llvmpipe.txt')) }));
    expect(plan).toMatchObject({ route: 'prebuilt', backend: 'vulkan', composition: { main: 'linux-x64-vulkan' } });
    expect(plan.warnings[0]).toMatch(/Vulkan backend on NVIDIA GeForce RTX 4090, not CUDA/);
  });

  it('builds CUDA from source where nvcc exists but the prebuilt runtime does not fit', () => {
    const plan = planEngine(machine({ nvidia: h200, nvcc: '/usr/local/cuda/bin/nvcc' }));
    expect(plan).toMatchObject({ route: 'source', backend: 'cuda' });
  });

  it('uses Vulkan for a non-NVIDIA GPU, and never the software renderer', () => {
    expect(planEngine(machine({ vulkanDevices: parseVulkanSummary(fixture('vulkaninfo-amd.txt')) }))).toMatchObject({
      route: 'prebuilt',
      backend: 'vulkan',
      composition: { main: 'linux-x64-vulkan', extras: [{ key: 'linux-x64' }] },
    });
  });

  it('builds from source where no package fits the platform', () => {
    expect(planEngine(machine({ platform: 'win32' }))).toMatchObject({ route: 'source', backend: 'cpu' });
    expect(planEngine(machine({ platform: 'win32' })).reason).toMatch(/used on Linux and macOS only, not win32/);
    expect(planEngine(machine({ arch: 'arm64' }))).toMatchObject({ route: 'prebuilt', composition: { main: 'linux-arm64' } });
    const armVulkan = planEngine(machine({ arch: 'arm64', vulkanDevices: parseVulkanSummary(fixture('vulkaninfo-amd.txt')) }));
    expect(armVulkan).toMatchObject({ route: 'source', backend: 'vulkan' });
    expect(armVulkan.reason).toMatch(/no prebuilt vulkan libraries for linux-arm64/);
  });

  it('follows --backend and --from-source', () => {
    expect(planEngine(machine(), { backend: 'vulkan' })).toMatchObject({ route: 'prebuilt', backend: 'vulkan' });
    expect(planEngine(machine(), { backend: 'cpu', fromSource: true })).toMatchObject({ route: 'source', backend: 'cpu' });
    expect(planEngine(machine(), { fromSource: true })).toMatchObject({ route: 'source', backend: 'cpu' });
    const forcedCuda = planEngine(machine({ nvidia: h200 }), { backend: 'cuda' });
    expect(forcedCuda).toMatchObject({ route: 'source', backend: 'cuda' });
    expect(forcedCuda.reason).toMatch(/building from source with nvcc instead/);
    const fromSourceOnGpu = planEngine(machine({ nvidia: h200 }), { fromSource: true });
    expect(fromSourceOnGpu).toMatchObject({ route: 'source', backend: 'cpu' });
    expect(fromSourceOnGpu.warnings[0]).toMatch(/THE ENGINE WILL RUN ON THE CPU/);
  });
});

// Constructed machine facts: no Mac runs these tests. What each package holds is in
// test/fixtures/prebuilt (taken from `npm pack` of the pinned version).
describe('the engine plan on a Mac (constructed machine facts)', () => {
  const mac = (arch: string, macosVersion: string | null = '15.3.1') => machine({ platform: 'darwin', arch, macosVersion });

  it('builds Apple Silicon on the prebuilt Metal package', () => {
    const plan = planEngine(mac('arm64'));
    expect(plan).toMatchObject({
      route: 'prebuilt',
      backend: 'metal',
      composition: { main: 'mac-arm64-metal', extras: [] },
      cudaRuntime: null,
      warnings: [],
    });
    expect(plan.reason).toMatch(/Apple Silicon/);
    // The macOS version unknown: the plan stands, and the smoke test proves the libraries load.
    expect(planEngine(mac('arm64', null))).toMatchObject({ route: 'prebuilt', backend: 'metal' });
  });

  it('gives an Intel Mac the CPU package, and says loudly that it runs on the CPU and how to get Metal', () => {
    const plan = planEngine(mac('x64'));
    expect(plan).toMatchObject({ route: 'prebuilt', backend: 'cpu', composition: { main: 'mac-x64', extras: [] } });
    expect(plan.warnings).toEqual([
      expect.stringMatching(/^THE ENGINE WILL RUN ON THE CPU: node-llama-cpp publishes no Metal build for Intel Macs/),
    ]);
    expect(plan.warnings[0]).toMatch(/inferlab setup --backend metal/);
    expect(plan.warnings[0]).toMatch(/gpu_offload: none/);
  });

  it('builds Metal from source where asked, where the package has no Metal, and where macOS is older than the packages', () => {
    expect(planEngine(mac('arm64'), { fromSource: true })).toMatchObject({ route: 'source', backend: 'metal' });
    expect(planEngine(mac('x64'), { fromSource: true })).toMatchObject({ route: 'source', backend: 'metal' });
    const intelMetal = planEngine(mac('x64'), { backend: 'metal' });
    expect(intelMetal).toMatchObject({ route: 'source', backend: 'metal' });
    expect(intelMetal.reason).toMatch(/no prebuilt metal libraries for darwin-x64, so building from source/);
    // The packages' Mach-O headers say minos 14.0.
    const ventura = planEngine(mac('arm64', '13.6.7'));
    expect(ventura).toMatchObject({ route: 'source', backend: 'metal' });
    expect(ventura.reason).toMatch(/need macOS 14 or newer and this is macOS 13\.6\.7/);
    expect(planEngine(mac('arm64', '14.0'))).toMatchObject({ route: 'prebuilt', backend: 'metal' });
    expect(planEngine(mac('arm64', '13.6.7'), { backend: 'cpu' })).toMatchObject({ route: 'source', backend: 'cpu' });
  });

  it('follows --backend on a Mac: the CPU engine is the Metal package without its Metal backend; CUDA and Vulkan have no package', () => {
    expect(planEngine(mac('arm64'), { backend: 'cpu' })).toMatchObject({
      route: 'prebuilt',
      backend: 'cpu',
      composition: { main: 'mac-arm64-metal', omit: /^libggml-metal\.so$/ },
    });
    expect(planEngine(mac('arm64'), { backend: 'metal' })).toMatchObject({ route: 'prebuilt', composition: { main: 'mac-arm64-metal' } });
    for (const backend of ['cuda', 'vulkan'] as const) {
      const plan = planEngine(mac('arm64'), { backend });
      expect(plan, backend).toMatchObject({ route: 'source', backend });
      expect(plan.reason).toMatch(new RegExp(`no prebuilt ${backend} libraries for darwin-arm64`));
    }
  });
});
