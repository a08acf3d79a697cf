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
  /** The operating system its libraries are built for. */
  platform: PrebuiltPlatform;
}

export type PrebuiltPlatform = 'linux' | 'darwin';

/**
 * How a platform names and finds shared libraries. The backends ggml loads at run time end in
 * ".so" on both (ggml's loader looks for libggml-*.so on macOS too); the libraries the tools
 * link against end in the platform's own extension, and are found beside the binary through
 * the run path.
 */
export interface LibraryConventions {
  /** The extension of the libraries the tools link against. */
  linkedExtension: '.so' | '.dylib';
  /** The run path that means "the folder of the binary or library that loads it". */
  runPath: '$ORIGIN' | '@loader_path';
}

export const LIBRARY_CONVENTIONS: Record<PrebuiltPlatform, LibraryConventions> = {
  linux: { linkedExtension: '.so', runPath: '$ORIGIN' },
  darwin: { linkedExtension: '.dylib', runPath: '@loader_path' },
};

const version = PINNED_SOURCE.version;

export const PREBUILT_PACKAGES = {
  'linux-x64': {
    name: '@node-llama-cpp/linux-x64',
    version,
    integrity: 'sha512-Totj6RTDMGo3FoK2yNUaz/oGmZD0olAqTrRluFUWmu0kW2i9TOzHSW0OWCAiGkzRCVX0WsU2CyUQo/W2NYtdPA==',
    libDir: 'package/bins/linux-x64',
    platform: 'linux',
  },
  'linux-arm64': {
    name: '@node-llama-cpp/linux-arm64',
    version,
    integrity: 'sha512-eI3anSEGzJiwF2rpMpZVTdHzw47LztbvfvuRzlu/fPO18ROnBOd+75RPUBlV6qENPpmNtbov85+3VODwEwBurg==',
    libDir: 'package/bins/linux-arm64',
    platform: 'linux',
  },
  // Its libggml-cuda.so loads CUDA 13's libcudart.so.13 and libcublas.so.13.
  'linux-x64-cuda': {
    name: '@node-llama-cpp/linux-x64-cuda',
    version,
    integrity: 'sha512-idsE55VoD/FbvLhnBC9krUJaUoC0XnebseAAnCpm/brKf61HEbu+idgbb5eN6mxkjLSrHtILprJ0nDcUJjVrFg==',
    libDir: 'package/bins/linux-x64-cuda',
    platform: 'linux',
  },
  // Only a libggml-cuda.so built against CUDA 12 (libcudart.so.12), replacing the one above.
  'linux-x64-cuda-ext': {
    name: '@node-llama-cpp/linux-x64-cuda-ext',
    version,
    integrity: 'sha512-1PuURowccBcks3CCoMe1mTHh5vD0V5bFHMUEgtbI/OSDjpP+Pdbn+lf42CGUrepTzR8kCH1HovQ7d8q6/vuIKA==',
    libDir: 'package/bins/linux-x64-cuda/fallback',
    platform: 'linux',
  },
  // Carries no CPU backend of its own: the CPU variants come from linux-x64.
  'linux-x64-vulkan': {
    name: '@node-llama-cpp/linux-x64-vulkan',
    version,
    integrity: 'sha512-flEeSzONQ6OIm5bYKLQf4eEnBzcC5WugFbyPUwkCqyyOFZ8pH0H9ulQ7ZNDLSIczeKneMRJornlyY1Hq7d3GDA==',
    libDir: 'package/bins/linux-x64-vulkan',
    platform: 'linux',
  },
  // Apple Silicon: ggml and llama with the Metal backend (its shaders embedded in libggml-metal.so),
  // BLAS through Accelerate and a CPU variant per chip family (apple_m1, apple_m2_m3, apple_m4).
  'mac-arm64-metal': {
    name: '@node-llama-cpp/mac-arm64-metal',
    version,
    integrity: 'sha512-6MIDAZV7DXD9R1+jEXWJkFuolni3GATGE6mmuyFYc6ZmtOh9djAy15df0T0AXK3sCmVKL+fQcOAWZezxx4MvQQ==',
    libDir: 'package/bins/mac-arm64-metal',
    platform: 'darwin',
  },
  // Intel Macs: a CPU build (x86 CPU variants, BLAS through Accelerate); it has no Metal backend.
  'mac-x64': {
    name: '@node-llama-cpp/mac-x64',
    version,
    integrity: 'sha512-Q4nyNmbcNiKygBZQZjX+qLk2w3YzoiFpLWsxNURQN7xjyUi2p2rWxjRa7Otg0FrjGf/ri4aQ+X3Uj5Y0zD06eg==',
    libDir: 'package/bins/mac-x64',
    platform: 'darwin',
  },
} as const satisfies Record<string, PrebuiltPackage>;

export type PrebuiltPackageKey = keyof typeof PREBUILT_PACKAGES;

export interface PrebuiltComposition {
  /** The package whose llama, llama-common and ggml libraries the tools link against. */
  main: PrebuiltPackageKey;
  /** Packages that add or replace only the named files. */
  extras: { key: PrebuiltPackageKey; files: RegExp }[];
  /** Files of the main package left out of the engine (a GPU backend a CPU engine must not load). */
  omit?: RegExp;
}

/** The packages that make up an engine for `backend` on a platform and architecture, or null where none fits. */
export function compositionFor(
  backend: EngineBackend,
  platform: NodeJS.Platform,
  arch: string,
  cudaMajor: 12 | 13 | null,
): PrebuiltComposition | null {
  if (platform === 'darwin') return macComposition(backend, arch);
  if (platform !== 'linux') return null;
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

/**
 * Apple Silicon has one package, with Metal: its CPU engine is the same libraries without the
 * Metal backend, which ggml then never finds. Intel Macs have a CPU package and no Metal one.
 */
function macComposition(backend: EngineBackend, arch: string): PrebuiltComposition | null {
  if (arch === 'arm64') {
    if (backend === 'metal') return { main: 'mac-arm64-metal', extras: [] };
    if (backend === 'cpu') return { main: 'mac-arm64-metal', extras: [], omit: /^libggml-metal\.so$/ };
    return null;
  }
  return arch === 'x64' && backend === 'cpu' ? { main: 'mac-x64', extras: [] } : null;
}

/** The library conventions of the platform a composition's packages are built for. */
export function conventionsOf(composition: PrebuiltComposition): LibraryConventions {
  return LIBRARY_CONVENTIONS[PREBUILT_PACKAGES[composition.main].platform];
}

export function compositionPackages(composition: PrebuiltComposition): PrebuiltPackage[] {
  return [composition.main, ...composition.extras.map((extra) => extra.key)].map((key) => PREBUILT_PACKAGES[key]);
}
