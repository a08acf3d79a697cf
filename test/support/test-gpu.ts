import path from 'node:path';
import { findExecutable } from '../../src/main/core/which';
import { projectRoot } from '../../src/main/core/paths';

/** The constructed nvidia-smi stand-in (test/fixtures/nvidia-smi/README.md): an H200 replayed, no CUDA runtime behind it. */
export const NVIDIA_SMI_STAND_IN_DIR = path.join(projectRoot(), 'test', 'fixtures', 'nvidia-smi', 'bin');

/** The GPU tools the product reads on Linux; macOS always has one (ioreg). */
const GPU_TOOLS = ['nvidia-smi', 'amd-smi', 'rocm-smi'];

export type TestGpu = 'machine' | 'stand-in';

/**
 * Which GPU the tests that start servers see, and the PATH that gives it: the machine's own where
 * it has a GPU tool; where it has none, the stand-in first on PATH (a GPU box whose engine is a CPU
 * build), so the GPU paths run on every machine. INFERLAB_TEST_GPU=machine keeps the PATH as it is,
 * to run them as a machine without a GPU.
 */
export function testGpuPath(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): { gpu: TestGpu; path: string } {
  const current = env.PATH ?? '';
  const machineHasOne = platform === 'darwin' || GPU_TOOLS.some((tool) => findExecutable(tool, env));
  if (machineHasOne || env.INFERLAB_TEST_GPU === 'machine') return { gpu: 'machine', path: current };
  return { gpu: 'stand-in', path: current ? `${NVIDIA_SMI_STAND_IN_DIR}${path.delimiter}${current}` : NVIDIA_SMI_STAND_IN_DIR };
}
