import type { EngineBackend } from '../../../shared/contract/engine';
import { PINNED_SOURCE } from './engine-source';

/**
 * node-llama-cpp's platform packages: prebuilt ggml, llama and llama-common libraries from
 * the same llama.cpp release as the pinned source bundle, so llama-server and its tools
 * compile against them instead of rebuilding the whole library. Pinned by version and by
 * the registry's integrity hash, like the source.
 */
export interface PrebuiltPackage {
  name: string;
  version: string;
  integrity: string;
  /** Folder inside the tarball that holds the libraries. */
  libDir: string;
}

const version = PINNED_SOURCE.version;

export const PREBUILT_PACKAGES = {
  'linux-x64': {
    name: '@node-llama-cpp/linux-x64',
    version,
    integrity: 'sha512-Totj6RTDMGo3FoK2yNUaz/oGmZD0olAqTrRluFUWmu0kW2i9TOzHSW0OWCAiGkzRCVX0WsU2CyUQo/W2NYtdPA==',
    libDir: 'package/bins/linux-x64',
  },
  'linux-arm64': {
    name: '@node-llama-cpp/linux-arm64',
    version,
    integrity: 'sha512-eI3anSEGzJiwF2rpMpZVTdHzw47LztbvfvuRzlu/fPO18ROnBOd+75RPUBlV6qENPpmNtbov85+3VODwEwBurg==',
    libDir: 'package/bins/linux-arm64',
  },
  // Its libggml-cuda.so loads CUDA 13's libcudart.so.13 and libcublas.so.13.
  'linux-x64-cuda': {
    name: '@node-llama-cpp/linux-x64-cuda',
    version,
    integrity: 'sha512-idsE55VoD/FbvLhnBC9krUJaUoC0XnebseAAnCpm/brKf61HEbu+idgbb5eN6mxkjLSrHtILprJ0nDcUJjVrFg==',
    libDir: 'package/bins/linux-x64-cuda',
  },
  // Only a libggml-cuda.so built against CUDA 12 (libcudart.so.12), replacing the one above.
  'linux-x64-cuda-ext': {
    name: '@node-llama-cpp/linux-x64-cuda-ext',
    version,
    integrity: 'sha512-1PuURowccBcks3CCoMe1mTHh5vD0V5bFHMUEgtbI/OSDjpP+Pdbn+lf42CGUrepTzR8kCH1HovQ7d8q6/vuIKA==',
    libDir: 'package/bins/linux-x64-cuda/fallback',
  },
  // Carries no CPU backend of its own: the CPU variants come from linux-x64.
  'linux-x64-vulkan': {
    name: '@node-llama-cpp/linux-x64-vulkan',
    version,
    integrity: 'sha512-flEeSzONQ6OIm5bYKLQf4eEnBzcC5WugFbyPUwkCqyyOFZ8pH0H9ulQ7ZNDLSIczeKneMRJornlyY1Hq7d3GDA==',
    libDir: 'package/bins/linux-x64-vulkan',
  },
} as const satisfies Record<string, PrebuiltPackage>;

export type PrebuiltPackageKey = keyof typeof PREBUILT_PACKAGES;

export interface PrebuiltComposition {
  /** The package whose llama, llama-common and ggml libraries the tools link against. */
  main: PrebuiltPackageKey;
  /** Packages that add or replace only the named files. */
  extras: { key: PrebuiltPackageKey; files: RegExp }[];
}

/** The packages that make up an engine for `backend` on Linux, or null where none fits. */
export function compositionFor(backend: EngineBackend, arch: string, cudaMajor: 12 | 13 | null): PrebuiltComposition | null {
  if (arch === 'arm64') return backend === 'cpu' ? { main: 'linux-arm64', extras: [] } : null;
  if (arch !== 'x64') return null;
  switch (backend) {
    case 'cpu':
      return { main: 'linux-x64', extras: [] };
    case 'cuda':
      if (cudaMajor === 13) return { main: 'linux-x64-cuda', extras: [] };
      if (cudaMajor === 12) return { main: 'linux-x64-cuda', extras: [{ key: 'linux-x64-cuda-ext', files: /^libggml-cuda\.so$/ }] };
      return null;
    case 'vulkan':
      return { main: 'linux-x64-vulkan', extras: [{ key: 'linux-x64', files: /^libggml-cpu-[\w-]+\.so$/ }] };
    case 'metal':
      return null;
  }
}

export function compositionPackages(composition: PrebuiltComposition): PrebuiltPackage[] {
  return [composition.main, ...composition.extras.map((extra) => extra.key)].map((key) => PREBUILT_PACKAGES[key]);
}
