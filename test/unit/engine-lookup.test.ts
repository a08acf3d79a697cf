import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assertPinnedIntegrity } from '../../src/main/engines/llamacpp/pinned-package';
import { PINNED_SOURCE } from '../../src/main/engines/llamacpp/engine-source';
import { locateEngine } from '../../src/main/engines/llamacpp/locate-engine';
import { ENGINE_BINARIES } from '../../src/main/engines/llamacpp/engine-build';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** An executable that answers `--version` the way llama-server does, naming itself. */
function fakeServer(dir: string, commit: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'llama-server');
  fs.writeFileSync(file, `#!/bin/sh\necho "version: 1 (${commit})"\n`, { mode: 0o755 });
  return file;
}

describe('where llama-server comes from', () => {
  it('takes INFERLAB_LLAMA_SERVER, then config.json, then PATH, then the managed build, in that order', async () => {
    const root = tempDir();
    const fromEnv = fakeServer(path.join(root, 'env'), 'aaaaaaa');
    const fromConfig = fakeServer(path.join(root, 'config'), 'bbbbbbb');
    const onPath = path.dirname(fakeServer(path.join(root, 'path'), 'ccccccc'));
    const data = path.join(root, 'data');
    fs.mkdirSync(data);
    fs.writeFileSync(path.join(data, 'config.json'), JSON.stringify({ engine: { llamaServerPath: fromConfig } }));
    const base = { PATH: `${onPath}:/usr/bin:/bin`, INFERLAB_DATA_DIR: data, INFERLAB_CACHE_DIR: path.join(root, 'empty-cache') };

    const byEnv = await locateEngine({ ...base, INFERLAB_LLAMA_SERVER: fromEnv });
    expect(byEnv.engine).toMatchObject({ origin: 'configured', serverPath: fromEnv, commit: 'aaaaaaa' });
    const byConfig = await locateEngine(base);
    expect(byConfig.engine).toMatchObject({ origin: 'configured', serverPath: fromConfig, commit: 'bbbbbbb' });
    fs.writeFileSync(path.join(data, 'config.json'), '{}');
    const byPath = await locateEngine(base);
    expect(byPath.engine).toMatchObject({ origin: 'path', serverPath: path.join(onPath, 'llama-server'), commit: 'ccccccc' });
    const none = await locateEngine({ ...base, PATH: '/nonexistent' });
    expect(none.engine).toBeNull();
    expect(none.problems.join(' ')).toMatch(/no llama-server configured, on PATH, or built in the cache/);
  });

  it('knows a configured path inside a managed build as that build, with its backend and route', async () => {
    const root = tempDir();
    const binDir = path.join(root, 'engine', 'llama.cpp-80fb11ac73e6', 'cpu-prebuilt', 'bin');
    const server = fakeServer(binDir, '80fb11a');
    for (const tool of ENGINE_BINARIES.filter((name) => name !== 'llama-server'))
      fs.writeFileSync(path.join(binDir, tool), '', { mode: 0o755 });
    const marker = {
      commit: '80fb11ac73e6',
      backend: 'cpu',
      binDir,
      builtAt: '2026-12-01T09:50:00Z',
      buildSeconds: 178,
      route: 'prebuilt',
      packages: [],
    };
    fs.writeFileSync(path.join(path.dirname(binDir), 'build.json'), JSON.stringify(marker));
    const env = { PATH: '/nonexistent', INFERLAB_DATA_DIR: root, INFERLAB_CACHE_DIR: path.join(root, 'other-cache') };

    const managed = await locateEngine({ ...env, INFERLAB_LLAMA_SERVER: server });
    expect(managed.engine).toMatchObject({ origin: 'configured', serverPath: server, backend: 'cpu', build: { route: 'prebuilt' } });
    // A binary beside no build record is an unknown build, not a guess.
    const loose = fakeServer(path.join(root, 'loose'), '80fb11a');
    expect((await locateEngine({ ...env, INFERLAB_LLAMA_SERVER: loose })).engine).toMatchObject({ backend: null, build: null });
  });

  it('reports a configured path that is not executable instead of quietly using another', async () => {
    const root = tempDir();
    const onPath = path.dirname(fakeServer(path.join(root, 'path'), 'ccccccc'));
    const lookup = await locateEngine({
      PATH: onPath,
      INFERLAB_LLAMA_SERVER: path.join(root, 'missing', 'llama-server'),
      INFERLAB_DATA_DIR: root,
      INFERLAB_CACHE_DIR: root,
    });
    expect(lookup.engine).toBeNull();
    expect(lookup.problems[0]).toMatch(/configured llama-server .* is missing or not executable/);
  });
});

describe('the pinned source bundle', () => {
  it('refuses a tarball whose bytes differ from the pinned integrity hash, and accepts the exact bytes', () => {
    const file = path.join(tempDir(), 'node-llama-cpp-3.21.1.tgz');
    fs.writeFileSync(file, 'the genuine bytes');
    const genuine = `sha512-${crypto.createHash('sha512').update('the genuine bytes').digest('base64')}`;
    expect(() => assertPinnedIntegrity(file, genuine)).not.toThrow();
    fs.appendFileSync(file, '\n# one extra line');
    expect(() => assertPinnedIntegrity(file, genuine)).toThrow(/does not match the pinned integrity hash .* refusing to build from it/);
    // The real pin is a sha512 of the published tarball, which no other bytes match.
    expect(() => assertPinnedIntegrity(file, PINNED_SOURCE.integrity)).toThrow(/refusing to build/);
  });
});
