import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readServerVersion } from '../../src/main/engines/llamacpp/server-version';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** A constructed llama-server that prints a version line (or none) and counts how often it was asked. */
function countingServer(dir: string, line: string): { serverPath: string; asked: () => number } {
  const serverPath = path.join(dir, 'llama-server');
  // Outside the binary's folder: a file written beside it would change the folder's key.
  const count = path.join(tempDir(), 'asked');
  fs.writeFileSync(serverPath, `#!/bin/sh\necho x >> '${count}'\n${line ? `echo '${line}'` : 'true'}\n`, { mode: 0o755 });
  return { serverPath, asked: () => (fs.existsSync(count) ? fs.readFileSync(count, 'utf8').split('\n').length - 1 : 0) };
}

describe('the engine version, kept per binary folder', () => {
  it('asks the binary once, and again when a file beside it changes', async () => {
    const bin = tempDir();
    const cache = tempDir();
    const { serverPath, asked } = countingServer(bin, 'version: 7 (80fb11a)');
    fs.writeFileSync(path.join(bin, 'libllama.so'), 'one');
    expect(await readServerVersion(serverPath, cache)).toEqual({ version: 'version: 7 (80fb11a)', commit: '80fb11a' });
    expect(await readServerVersion(serverPath, cache)).toEqual({ version: 'version: 7 (80fb11a)', commit: '80fb11a' });
    expect(asked()).toBe(1);

    // Another library of the same size: its times (and so the folder's key) differ.
    await new Promise((resolve) => setTimeout(resolve, 20));
    fs.writeFileSync(path.join(bin, 'libllama.so'), 'two');
    await readServerVersion(serverPath, cache);
    expect(asked()).toBe(2);
  });

  it('keeps no answer from a binary that printed no version line', async () => {
    const bin = tempDir();
    const cache = tempDir();
    const { serverPath, asked } = countingServer(bin, '');
    expect(await readServerVersion(serverPath, cache)).toEqual({ version: null, commit: null });
    expect(await readServerVersion(serverPath, cache)).toEqual({ version: null, commit: null });
    expect(asked()).toBe(2);
  });
});
