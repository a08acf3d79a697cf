import { spawnSync } from 'node:child_process';
import type { EngineBackend } from '../../../shared/contract/engine';
import { findExecutable } from '../../core/which';

export interface BackendChoice {
  backend: EngineBackend;
  reason: string;
}

function nvidiaGpuPresent(): boolean {
  const smi = findExecutable('nvidia-smi');
  if (!smi) return false;
  const result = spawnSync(smi, ['-L'], { encoding: 'utf8', timeout: 15_000 });
  return result.status === 0 && /^GPU \d+:/m.test(result.stdout);
}

function findNvcc(): string | null {
  return findExecutable('nvcc') ?? findExecutable('/usr/local/cuda/bin/nvcc');
}

/**
 * CUDA when the toolkit and an NVIDIA GPU are both present: a CUDA build on a machine
 * with nvcc but no driver would fail to start, so the toolkit alone is not enough.
 */
export function chooseBackend(forced?: EngineBackend): BackendChoice {
  if (forced) return { backend: forced, reason: `forced with --backend ${forced}` };
  if (process.platform === 'darwin') return { backend: 'metal', reason: 'macOS' };
  const nvcc = findNvcc();
  if (nvcc && nvidiaGpuPresent()) return { backend: 'cuda', reason: `nvcc at ${nvcc} and an NVIDIA GPU` };
  if (nvcc)
    return {
      backend: 'cpu',
      reason: `nvcc at ${nvcc} but no NVIDIA GPU answered nvidia-smi -L; building for CPU (force with --backend cuda)`,
    };
  return { backend: 'cpu', reason: 'no CUDA toolkit (nvcc) found' };
}

export function cmakeFlagsFor(backend: EngineBackend): string[] {
  switch (backend) {
    case 'cuda':
      return ['-DGGML_CUDA=ON'];
    case 'vulkan':
      return ['-DGGML_VULKAN=ON'];
    case 'metal':
      return ['-DGGML_METAL=ON'];
    case 'cpu':
      return [];
  }
}

export { findNvcc };
