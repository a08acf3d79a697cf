import type { EngineBackend } from '../../../shared/contract/engine';
import { findExecutable } from '../../core/which';

export function findNvcc(): string | null {
  return findExecutable('nvcc') ?? findExecutable('/usr/local/cuda/bin/nvcc');
}

/** What both build routes compile: the server and tools, without tests, examples, web UI or downloads. */
export const TOOL_CMAKE_FLAGS = [
  '-DLLAMA_BUILD_TESTS=OFF',
  '-DLLAMA_BUILD_EXAMPLES=OFF',
  '-DLLAMA_BUILD_TOOLS=ON',
  '-DLLAMA_BUILD_SERVER=ON',
  '-DLLAMA_BUILD_APP=OFF',
  // The web UI would be downloaded at configure time, and the server runs with --no-webui.
  '-DLLAMA_USE_PREBUILT_UI=OFF',
  '-DLLAMA_BUILD_UI=OFF',
  // Model downloads are the app's job, not the engine's.
  '-DLLAMA_OPENSSL=OFF',
  '-DLLAMA_CURL=OFF',
];

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
