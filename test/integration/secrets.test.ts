import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const SECRET = 'hf_integration_SECRET_value';

function filesContaining(dir: string, needle: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => fs.readFileSync(file).includes(Buffer.from(needle)));
}

describe('a real llama-server started with a secret flag', () => {
  it('runs with it, and keeps it out of the session record, the effective configuration and the logs folder', async () => {
    const dir = tempDir();
    const harness = await serverHarness(dir);
    try {
      // --hf-token is only used for downloads, so a local model starts normally with it.
      const profile = { ...defaultProfile('secret'), contextSize: 1024, threads: 1, extraFlags: ['--hf-token', SECRET] };
      // Other servers on a shared test machine must not block this one: it measures nothing.
      const server = await harness.servers.prepare({ modelRef: 'demo:q8_0', profile, force: true });
      const ready = await server.start();
      expect(ready.state).toBe('ready');
      expect(ready.effectiveConfig!.argv).toEqual(expect.arrayContaining(['--hf-token', 'REDACTED']));
      expect(JSON.stringify(ready)).not.toContain(SECRET);
      await server.stop();
    } finally {
      await harness.dispose();
    }
    expect(filesContaining(dir, SECRET)).toEqual([]);
  });
});
