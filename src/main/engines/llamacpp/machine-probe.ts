import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childEnvironment } from '../../core/child-env';
import { findExecutable } from '../../core/which';
import { findNvcc } from './backend';
import { CUDA_RUNTIME_LIBRARIES, type CudaRuntime, type MachineFacts, type NvidiaFacts } from './engine-plan';
import { parseNvidiaSmiGpus, parseVulkanSummary } from '../gpu-identity';

/** GPU names from `nvidia-smi -L` ("GPU 0: NVIDIA H200 (UUID: GPU-…)"). */
export function parseNvidiaSmiList(text: string): string[] {
  return parseNvidiaSmiGpus(text).map((gpu) => gpu.name);
}

/**
 * Driver and CUDA versions from the header of plain `nvidia-smi`: "Driver Version: 580.95.05  CUDA
 * Version: 13.0", and from driver 610 on "KMD Version: 610.43.02  CUDA UMD Version: 13.3". "N/A"
 * (no CUDA user-mode driver found) reads as null.
 */
export function parseNvidiaSmiHeader(text: string): { driverVersion: string | null; driverCudaVersion: string | null } {
  return {
    driverVersion: /(?:Driver|KMD) Version:\s*(\d[\d.]*)/.exec(text)?.[1] ?? /NVIDIA-SMI\s+(\d[\d.]*)/.exec(text)?.[1] ?? null,
    driverCudaVersion: /CUDA (?:UMD )?Version:\s*(\d[\d.]*)/.exec(text)?.[1] ?? null,
  };
}

/** Library name → path from `ldconfig -p` ("libcudart.so.13 (libc6,x86-64) => /usr/…/libcudart.so.13"). */
export function parseLdconfigCache(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const match of text.matchAll(/^\s*(\S+) \(([^)]*)\) => (\S+)\s*$/gm)) {
    // A 32-bit copy cannot be loaded by a 64-bit server.
    if (/x86-64|AArch64|64bit/.test(match[2]!) && !found.has(match[1]!)) found.set(match[1]!, match[3]!);
  }
  return found;
}

/**
 * The CUDA runtimes (13, then 12) whose every library is found: in the loader's cache, in
 * the CUDA toolkit folders, or in the pip wheels NVIDIA publishes (nvidia/cu13/lib,
 * nvidia/cuda_runtime/lib, nvidia/cublas/lib).
 */
export function findCudaRuntimes(ldconfig: Map<string, string>, folders: readonly string[]): CudaRuntime[] {
  const runtimes: CudaRuntime[] = [];
  for (const major of [13, 12] as const) {
    const libraries: Record<string, string> = {};
    for (const name of CUDA_RUNTIME_LIBRARIES(major)) {
      const inCache = ldconfig.get(name);
      const inFolder = folders.map((folder) => path.join(folder, name)).find((file) => fs.existsSync(file));
      const file = inCache && fs.existsSync(inCache) ? inCache : inFolder;
      if (file) libraries[name] = file;
    }
    if (Object.keys(libraries).length === CUDA_RUNTIME_LIBRARIES(major).length) runtimes.push({ major, libraries });
  }
  return runtimes;
}

function globFolders(pattern: { parent: string; prefix: string; suffix: string[] }): string[] {
  try {
    return fs
      .readdirSync(pattern.parent)
      .filter((name) => name.startsWith(pattern.prefix))
      .map((name) => path.join(pattern.parent, name, ...pattern.suffix));
  } catch {
    return [];
  }
}

/** Where CUDA runtime libraries live outside the loader's cache. */
export function cudaLibraryFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const arch = process.arch === 'arm64' ? 'sbsa-linux' : 'x86_64-linux';
  const toolkits = [env.CUDA_PATH, env.CUDA_HOME, '/usr/local/cuda', ...globFolders({ parent: '/usr/local', prefix: 'cuda-', suffix: [] })];
  const sitePackages = [
    env.VIRTUAL_ENV ? globFolders({ parent: path.join(env.VIRTUAL_ENV, 'lib'), prefix: 'python3', suffix: ['site-packages'] }) : [],
    globFolders({ parent: path.join(os.homedir(), '.local', 'lib'), prefix: 'python3', suffix: ['site-packages'] }),
    globFolders({ parent: '/usr/local/lib', prefix: 'python3', suffix: ['dist-packages'] }),
    globFolders({ parent: '/usr/lib', prefix: 'python3', suffix: ['dist-packages'] }),
  ].flat();
  return [
    ...toolkits
      .filter((dir): dir is string => Boolean(dir))
      .flatMap((dir) => [path.join(dir, 'lib64'), path.join(dir, 'lib'), path.join(dir, 'targets', arch, 'lib')]),
    ...sitePackages.flatMap((dir) => ['cu13/lib', 'cuda_runtime/lib', 'cublas/lib'].map((sub) => path.join(dir, 'nvidia', sub))),
  ];
}

function capture(binary: string | null, args: string[]): string | null {
  if (!binary) return null;
  const result = spawnSync(binary, args, { encoding: 'utf8', timeout: 15_000, env: childEnvironment() });
  return result.status === 0 ? result.stdout : null;
}

function probeNvidia(env: NodeJS.ProcessEnv): NvidiaFacts | null {
  const smi = findExecutable('nvidia-smi', env);
  const gpus = parseNvidiaSmiList(capture(smi, ['-L']) ?? '');
  if (gpus.length === 0) return null;
  return { gpus, ...parseNvidiaSmiHeader(capture(smi, []) ?? '') };
}

/** Everything planEngine decides on, read from this machine (a few short commands). */
export function probeMachine(env: NodeJS.ProcessEnv = process.env): MachineFacts {
  const linux = process.platform === 'linux';
  const nvidia = linux ? probeNvidia(env) : null;
  const ldconfig = linux ? parseLdconfigCache(capture(findExecutable('ldconfig', env) ?? '/sbin/ldconfig', ['-p']) ?? '') : new Map();
  const vulkanText = linux ? capture(findExecutable('vulkaninfo', env), ['--summary']) : null;
  return {
    platform: process.platform,
    arch: process.arch,
    nvidia,
    cudaRuntimes: nvidia ? findCudaRuntimes(ldconfig, cudaLibraryFolders(env)) : [],
    vulkanDevices: vulkanText === null ? null : parseVulkanSummary(vulkanText),
    nvcc: findNvcc(),
    macosVersion: process.platform === 'darwin' ? readMacosVersion(env) : null,
  };
}

/** "14.6.1" from `sw_vers -productVersion`; null where it cannot be read. */
function readMacosVersion(env: NodeJS.ProcessEnv): string | null {
  const text = capture(findExecutable('sw_vers', env) ?? '/usr/bin/sw_vers', ['-productVersion']);
  return /^\d+(\.\d+)*/.exec(text?.trim() ?? '')?.[0] ?? null;
}
