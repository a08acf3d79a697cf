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
