import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import config from '../../vitest.config';
import { NVIDIA_SMI_STAND_IN_DIR, testGpuPath } from '../support/test-gpu';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const root = projectRoot();

/** A PATH of one folder holding the named executables. */
function pathWith(...tools: string[]): string {
  const dir = tempDir();
  for (const tool of tools) fs.writeFileSync(path.join(dir, tool), '#!/bin/sh\n', { mode: 0o755 });
  return dir;
}

describe('the GPU the server tests see', () => {
  it('is the stand-in, first on PATH, where the machine has no GPU tool', () => {
    const bare = pathWith('node');
    expect(testGpuPath({ PATH: bare }, 'linux')).toEqual({ gpu: 'stand-in', path: `${NVIDIA_SMI_STAND_IN_DIR}:${bare}` });
    expect(fs.existsSync(path.join(NVIDIA_SMI_STAND_IN_DIR, 'nvidia-smi'))).toBe(true);
  });

  it("is the machine's own where it has one, and the PATH as it is where INFERLAB_TEST_GPU=machine asks", () => {
    for (const tool of ['nvidia-smi', 'amd-smi', 'rocm-smi']) {
      const own = pathWith(tool);
      expect(testGpuPath({ PATH: own }, 'linux'), tool).toEqual({ gpu: 'machine', path: own });
    }
    // A file of that name that cannot run is no GPU tool.
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'nvidia-smi'), '', { mode: 0o644 });
    expect(testGpuPath({ PATH: dir }, 'linux').gpu).toBe('stand-in');
    expect(testGpuPath({ PATH: dir, INFERLAB_TEST_GPU: 'machine' }, 'linux')).toEqual({ gpu: 'machine', path: dir });
    expect(testGpuPath({ PATH: pathWith() }, 'darwin').gpu).toBe('machine');
  });

  it('applies to every project that starts servers, and .ci/run runs the suite once after a setup under the stand-in', () => {
    const projects = (config.test?.projects ?? []) as { test: { name: string; include: string[]; setupFiles?: string[] } }[];
    const serverProjects = projects.filter((project) => project.test.include.some((glob) => /integration|e2e/.test(glob)));
    expect(serverProjects.map((project) => project.test.name).sort()).toEqual(['e2e', 'integration']);
    for (const project of serverProjects) expect(project.test.setupFiles, project.test.name).toContain('test/support/gpu-on-path.ts');
    const ci = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    // One command line starts the tests, and no second one runs them again.
    const testCommands = ci.split('\n').filter((line) => /^\s*(time\s+)?(\w+=\S+\s+)*(npm (test|run test)|npx vitest)\b/.test(line));
    expect(testCommands).toEqual([expect.stringMatching(/^time npm test /)]);
    expect(ci).toMatch(/PATH="\$stand_in:\$PATH" \.\/bin\/inferlab setup/);
  });

  it('leaves no test out: no server test file carries a tag that a filter could drop', () => {
    for (const dir of ['test/integration', 'test/e2e'])
      for (const name of fs.readdirSync(path.join(root, dir)).filter((file) => file.endsWith('.test.ts')))
        expect(fs.readFileSync(path.join(root, dir, name), 'utf8'), name).not.toMatch(/@module-tag|own-gpu-tools|gpu-path/);
  });
});
