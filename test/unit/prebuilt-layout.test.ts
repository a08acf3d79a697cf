import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_LIBRARY } from '../../src/main/engines/llamacpp/engine-build';
import { layDownLibraries, linkAliases, prebuiltCmakeFlags, prebuiltConfigureArgs } from '../../src/main/engines/llamacpp/prebuilt-build';
import {
  compositionFor,
  compositionPackages,
  PREBUILT_PACKAGES,
  type PrebuiltComposition,
  type PrebuiltPackageKey,
} from '../../src/main/engines/llamacpp/prebuilt-packages';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** A package's file list as `npm pack` + `tar tzf` gave it (test/fixtures/prebuilt), with the header's integrity. */
function packageList(key: PrebuiltPackageKey): { files: string[]; integrity: string } {
  const text = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'prebuilt', `${key}-3.21.1.txt`), 'utf8');
  const [header, body] = text.split('# ---\n');
  return {
    files: body!.split('\n').filter(Boolean),
    integrity: /integrity (sha512-\S+?)\)/.exec(header!)![1]!,
  };
}

/** The package's tarball laid out as extraction leaves it: every listed file, empty. */
function extracted(key: PrebuiltPackageKey): string {
  const dir = tempDir();
  for (const file of packageList(key).files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), '');
  }
  return dir;
}

function layDown(composition: PrebuiltComposition): { laid: string[]; binDir: string } {
  const dirs = new Map(compositionPackages(composition).map((ref) => [ref.name, extracted(keyOf(ref.name))]));
  const binDir = path.join(tempDir(), 'bin');
  return { laid: layDownLibraries(dirs, composition, binDir), binDir };
}

function keyOf(name: string): PrebuiltPackageKey {
  return (Object.keys(PREBUILT_PACKAGES) as PrebuiltPackageKey[]).find((key) => PREBUILT_PACKAGES[key].name === name)!;
}

function links(binDir: string): Record<string, string> {
  return Object.fromEntries(
    fs
      .readdirSync(binDir)
      .filter((name) => fs.lstatSync(path.join(binDir, name)).isSymbolicLink())
      .map((name) => [name, fs.readlinkSync(path.join(binDir, name))]),
  );
}

describe("the prebuilt route's layout, checked against the packages' real file lists", () => {
  it('pins the packages the lists were taken from', () => {
    for (const key of ['mac-arm64-metal', 'mac-x64', 'linux-x64'] as const)
      expect(PREBUILT_PACKAGES[key].integrity, key).toBe(packageList(key).integrity);
    for (const key of ['mac-arm64-metal', 'mac-x64'] as const) {
      const libDir = `${PREBUILT_PACKAGES[key].libDir}/`;
      expect(packageList(key).files.filter((file) => file.startsWith(libDir)).length, key).toBeGreaterThan(5);
    }
  });

  it('Apple Silicon, Metal: the four dylibs and every backend module beside the binaries, linked by their plain names', () => {
    const { laid, binDir } = layDown(compositionFor('metal', 'darwin', 'arm64', null)!);
    expect([...laid].sort()).toEqual([
      'libggml-base.dylib',
      'libggml-blas.so',
      'libggml-cpu-apple_m1.so',
      'libggml-cpu-apple_m2_m3.so',
      'libggml-cpu-apple_m4.so',
      'libggml-metal.so',
      'libggml.metal.v0.4.0.dylib',
      'libllama-common.dylib',
      'libllama.metal.v0.4.0.dylib',
    ]);
    // The build links -lllama and -lggml by these names; the binary records the library's own install name.
    expect(links(binDir)).toEqual({ 'libggml.dylib': 'libggml.metal.v0.4.0.dylib', 'libllama.dylib': 'libllama.metal.v0.4.0.dylib' });
    // node-llama-cpp's addon and build metadata are not the engine's.
    expect(fs.existsSync(path.join(binDir, 'llama-addon.node'))).toBe(false);
    expect(fs.existsSync(path.join(binDir, '_nlcBuildMetadata.json'))).toBe(false);
    // Everything laid is carried into the installed engine.
    for (const name of [...laid, 'libllama.dylib', 'libggml.dylib', 'libmtmd.dylib']) expect(ENGINE_LIBRARY.test(name), name).toBe(true);
    expect(ENGINE_LIBRARY.test('llama-addon.node')).toBe(false);
  });

  it('Apple Silicon, CPU: the same package without the Metal backend, which ggml then never loads', () => {
    const { laid } = layDown(compositionFor('cpu', 'darwin', 'arm64', null)!);
    expect(laid).not.toContain('libggml-metal.so');
    expect(laid).toEqual(expect.arrayContaining(['libggml-cpu-apple_m1.so', 'libllama.metal.v0.4.0.dylib']));
  });

  it('Intel Mac: the CPU package, its x86 variants and unsuffixed library names', () => {
    const { laid, binDir } = layDown(compositionFor('cpu', 'darwin', 'x64', null)!);
    expect(laid.filter((name) => name.startsWith('libggml-cpu-'))).toHaveLength(14);
    expect(laid).not.toContain('libggml-metal.so');
    expect(links(binDir)).toEqual({ 'libggml.dylib': 'libggml.v0.4.0.dylib', 'libllama.dylib': 'libllama.v0.4.0.dylib' });
  });

  it('Linux: the layout it always had', () => {
    const { laid, binDir } = layDown(compositionFor('cpu', 'linux', 'x64', null)!);
    const listed = packageList('linux-x64')
      .files.map((file) => path.basename(file))
      .filter((name) => name.endsWith('.so'));
    expect([...laid].sort()).toEqual([...listed].sort());
    expect(links(binDir)).toEqual({ 'libggml.so': 'libggml.v0.4.0.so', 'libllama.so': 'libllama.v0.4.0.so' });
    expect(linkAliases(['libllama.cuda.v0.4.0.so', 'libggml-base.so', 'libllama-common.so'])).toEqual({
      'libllama.so': 'libllama.cuda.v0.4.0.so',
    });
  });

  it('refuses a package that lacks a library the tools link', () => {
    const composition = compositionFor('metal', 'darwin', 'arm64', null)!;
    const dir = extracted('mac-arm64-metal');
    fs.rmSync(path.join(dir, PREBUILT_PACKAGES['mac-arm64-metal'].libDir, 'libllama-common.dylib'));
    expect(() => layDownLibraries(new Map([[PREBUILT_PACKAGES['mac-arm64-metal'].name, dir]]), composition, tempDir())).toThrow(
      /@node-llama-cpp\/mac-arm64-metal@3\.21\.1 has no libllama-common\.dylib in package\/bins\/mac-arm64-metal/,
    );
  });
});

describe("the prebuilt route's configure step", () => {
  it('on Linux: the flags it always had, $ORIGIN as the run path', () => {
    expect(prebuiltCmakeFlags(compositionFor('cuda', 'linux', 'x64', 13)!, 'cuda')).toEqual([
      '-DCMAKE_BUILD_TYPE=Release',
      '-DBUILD_SHARED_LIBS=ON',
      '-DCMAKE_PLATFORM_NO_VERSIONED_SONAME=ON',
      '-DGGML_BACKEND_DL=ON',
      '-DGGML_CPU_ALL_VARIANTS=ON',
      '-DGGML_NATIVE=OFF',
      '-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON',
      '-DCMAKE_INSTALL_RPATH=$ORIGIN',
      '-DLLAMA_BUILD_TESTS=OFF',
      '-DLLAMA_BUILD_EXAMPLES=OFF',
      '-DLLAMA_BUILD_TOOLS=ON',
      '-DLLAMA_BUILD_SERVER=ON',
      '-DLLAMA_BUILD_APP=OFF',
      '-DLLAMA_USE_PREBUILT_UI=OFF',
      '-DLLAMA_BUILD_UI=OFF',
      '-DLLAMA_OPENSSL=OFF',
      '-DLLAMA_CURL=OFF',
    ]);
  });

  it('on a Mac (constructed: no Mac runs this): @loader_path as the run path, Metal configured only for the Metal engine', () => {
    const metal = prebuiltCmakeFlags(compositionFor('metal', 'darwin', 'arm64', null)!, 'metal');
    expect(metal).toContain('-DCMAKE_INSTALL_RPATH=@loader_path');
    expect(metal).toContain('-DGGML_METAL=ON');
    expect(metal.join(' ')).not.toMatch(/\$ORIGIN/);
    expect(metal).toEqual(
      expect.arrayContaining(['-DBUILD_SHARED_LIBS=ON', '-DGGML_BACKEND_DL=ON', '-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON']),
    );
    expect(prebuiltCmakeFlags(compositionFor('cpu', 'darwin', 'arm64', null)!, 'cpu')).toContain('-DGGML_METAL=OFF');
    expect(prebuiltCmakeFlags(compositionFor('cpu', 'darwin', 'x64', null)!, 'cpu')).toContain('-DGGML_METAL=OFF');
    expect(
      prebuiltConfigureArgs({
        sourceDir: '/src',
        buildDir: '/b',
        unityScript: '/b/u.cmake',
        composition: compositionFor('metal', 'darwin', 'arm64', null)!,
        backend: 'metal',
      }),
    ).toEqual(['-S', '/src', '-B', '/b', '-G', 'Unix Makefiles', ...metal, '-DCMAKE_PROJECT_INCLUDE=/b/u.cmake']);
  });
});
