import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';

/**
 * The selection rule of .ci/run's second pass (a GPU box whose engine is a CPU build): every
 * integration and UI test file runs again under the nvidia-smi stand-in, since each starts a
 * server, an experiment or setup, and so reads the GPU. No list of GPU-sensitive tests is kept, so
 * none can be forgotten; the one way out is the own-gpu-tools tag, for a file that sets the PATH its
 * samplers read itself, and this file holds each use of it to that.
 */
const root = projectRoot();
const serverTestDirs = ['test/integration', 'test/e2e'];
const testFiles = serverTestDirs.flatMap((dir) =>
  fs
    .readdirSync(path.join(root, dir))
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => path.join(dir, name)),
);

function standInPassCommand(): string {
  const ci = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
  const command = ci
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .find((line) => line.includes('counts-gpu-stand-in.json') && line.includes('vitest run'));
  expect(command, 'the stand-in pass in .ci/run').toBeDefined();
  return command!;
}

describe(".ci/run's stand-in pass", () => {
  it('runs every integration and UI test file under the stand-in, leaving out only those tagged own-gpu-tools', () => {
    const command = standInPassCommand();
    expect(command).toMatch(/^PATH="\$stand_in:\$PATH" /);
    expect(command).toContain('--project integration --project e2e');
    // No file names and no other tag: the selection is the whole of both projects, less one tag.
    const filters = [...command.matchAll(/--tags-filter '([^']*)'|--tags-filter (\S+)/g)].map((match) => match[1] ?? match[2]);
    expect(filters).toEqual(['!own-gpu-tools']);
    expect(command).not.toMatch(/\.test\.ts/);
  });

  it('lets a file out only where it sets the PATH its GPU samplers read, a stand-in of its own or none', () => {
    const tagged = testFiles.filter((file) => /own-gpu-tools/.test(fs.readFileSync(path.join(root, file), 'utf8')));
    expect(tagged.length).toBeGreaterThan(0);
    for (const file of tagged) {
      const text = fs.readFileSync(path.join(root, file), 'utf8');
      expect(text, `${file} is tagged own-gpu-tools`).toMatch(/\bPATH: /);
      expect(text, `${file} is tagged own-gpu-tools`).toMatch(/fixtures', 'nvidia-smi'|nvidia-smi/);
    }
  });

  it('leaves no trace of a hand-kept list: no test names the retired gpu-path tag', () => {
    for (const file of testFiles) expect(fs.readFileSync(path.join(root, file), 'utf8'), file).not.toMatch(/gpu-path/);
    expect(fs.readFileSync(path.join(root, 'vitest.config.ts'), 'utf8')).not.toMatch(/'gpu-path'/);
  });
});
