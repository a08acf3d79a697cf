import { describe, expect, it } from 'vitest';
import type { EngineBuildOutcome } from '../../src/main/engines/llamacpp/engine-build';
import { planEngine, type MachineFacts } from '../../src/main/engines/llamacpp/engine-plan';
import { buildWithGpuFallback, listFailedGpuBuilds } from '../../src/main/engines/llamacpp/gpu-build-fallback';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

// A GPU box with the CUDA toolkit but without cuBLAS: the plan is a CUDA source build that CMake cannot configure.
const facts: MachineFacts = {
  platform: 'linux',
  arch: 'x64',
  nvidia: { gpus: ['NVIDIA H200'], driverVersion: '580.95.05', driverCudaVersion: '13.0' },
  cudaRuntimes: [],
  vulkanDevices: null,
  nvcc: '/usr/local/cuda/bin/nvcc',
};
const CMAKE_FAILURE =
  'cmake configure failed (exit 1):\n-- Found CUDAToolkit\nCMake Error at ggml/src/ggml-cuda/CMakeLists.txt:\n  Target "ggml-cuda" links to:\n    CUDA::cublas\n  but the target was not found.';

function outcome(backend: EngineBuildOutcome['backend']): EngineBuildOutcome {
  return { commit: 'abc', backend, binDir: `/cache/${backend}/bin`, builtAt: '', buildSeconds: 1, reused: true, warnings: [] };
}

/** A builder that fails every plan of the given backends and records what it was asked to build. */
function builder(failing: string[]) {
  const asked: string[] = [];
  const build = async (plan: ReturnType<typeof planEngine>) => {
    asked.push(`${plan.route}:${plan.backend}`);
    if (failing.includes(plan.backend)) throw new Error(CMAKE_FAILURE);
    return outcome(plan.backend);
  };
  return { asked, build };
}

function options(engineDir: string, build: ReturnType<typeof builder>['build'], overrides = {}) {
  return {
    engineDir,
    plan: planEngine(facts),
    cpuPlan: () => planEngine(facts, { backend: 'cpu' }),
    nvcc: facts.nvcc,
    explicit: false,
    retry: false,
    build,
    log: () => undefined,
    ...overrides,
  };
}

describe('a GPU plan that cannot be built', () => {
  it('falls back to the CPU engine, says why loudly, and does not fail the same way on the next setup', async () => {
    const engineDir = tempDir();
    expect(planEngine(facts)).toMatchObject({ route: 'source', backend: 'cuda' });
    const first = builder(['cuda']);
    const built = await buildWithGpuFallback(options(engineDir, first.build));
    expect(first.asked).toEqual(['source:cuda', 'prebuilt:cpu']);
    expect(built.backend).toBe('cpu');
    expect(built.warnings.join('\n')).toMatch(/THE ENGINE WILL RUN ON THE CPU although this machine was planned for cuda/);
    // The reason names what CMake could not find, not its first progress line.
    expect(built.warnings.join('\n')).toMatch(/CUDA::cublas|not found/);
    expect(built.warnings.join('\n')).toMatch(/inferlab setup --backend cuda/);
    expect(listFailedGpuBuilds(engineDir)).toHaveLength(1);

    const second = builder(['cuda']);
    const again = await buildWithGpuFallback(options(engineDir, second.build));
    expect(second.asked).toEqual(['prebuilt:cpu']);
    expect(again.warnings.join('\n')).toMatch(/its build failed on \d{4}-\d\d-\d\d/);
  });

  it('tries again once the machine changed, with --force, and fails loudly when the backend was asked for', async () => {
    const engineDir = tempDir();
    await buildWithGpuFallback(options(engineDir, builder(['cuda']).build));

    // cuBLAS installed: a prebuilt CUDA plan is another attempt, and its success clears nothing it does not own.
    const withRuntime = { ...facts, cudaRuntimes: [{ major: 13 as const, libraries: {} }] };
    const changed = builder([]);
    const built = await buildWithGpuFallback(options(engineDir, changed.build, { plan: planEngine(withRuntime) }));
    expect(changed.asked).toEqual(['prebuilt:cuda']);
    expect(built.warnings).toEqual([]);

    const forced = builder([]);
    await buildWithGpuFallback(options(engineDir, forced.build, { retry: true }));
    expect(forced.asked).toEqual(['source:cuda']);
    expect(listFailedGpuBuilds(engineDir)).toEqual([]);

    await expect(
      buildWithGpuFallback(options(engineDir, builder(['cuda']).build, { plan: planEngine(facts, { backend: 'cuda' }), explicit: true })),
    ).rejects.toThrow(/CUDA::cublas/);
  });

  it('never falls back from a cancelled build', async () => {
    const controller = new AbortController();
    controller.abort();
    const cancelled = builder(['cuda']);
    await expect(buildWithGpuFallback(options(tempDir(), cancelled.build, { signal: controller.signal }))).rejects.toThrow();
    expect(cancelled.asked).toEqual(['source:cuda']);
  });
});
