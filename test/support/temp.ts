import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/** A fresh temporary folder per call, removed after the test that asked for it. */
export function useTempDirs(): () => string {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-test-'));
    made.push(dir);
    return dir;
  };
}

/**
 * A data folder of its own (config, tokens, logs, new models) holding the user's demo models,
 * hard-linked where the file system allows and copied otherwise, so a test that saves settings
 * or quantizes a demo model leaves the user's own data folder as it was. Nothing writes into a
 * demo model file, so sharing their bytes is safe. The caller removes the folder.
 */
export function isolatedDataDir(sourceDemoDir: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-data-'));
  const demo = path.join(dir, 'demo-models');
  fs.mkdirSync(demo);
  for (const name of fs.existsSync(sourceDemoDir) ? fs.readdirSync(sourceDemoDir) : []) {
    const from = path.join(sourceDemoDir, name);
    try {
      fs.linkSync(from, path.join(demo, name));
    } catch {
      fs.copyFileSync(from, path.join(demo, name));
    }
  }
  return dir;
}
