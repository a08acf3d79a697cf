import type { EngineBackend } from '../../../shared/contract/engine';
import { findExecutable } from '../../core/which';

export function findNvcc(): string | null {
  return findExecutable('nvcc') ?? findExecutable('/usr/local/cuda/bin/nvcc');
}

/** The cmake flags that select a backend for the full source build. */
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
