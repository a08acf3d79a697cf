import { describe, expect, it } from 'vitest';
import { parseHubRef } from '../../src/main/models/hub/hub-access';
import { planModels, type PlanMachine } from '../../src/main/models/plan/plan-models';
import { useTinyGgufHub } from '../support/stand-in-hub';
import { useTempDirs } from '../support/temp';

/**
 * The revision after `@` in hf:OWNER/REPO@REVISION is the user's text (or a page's, over RPC)
 * and goes into the hub's request paths. It is held to what git and the hub call a revision,
 * and sent as one encoded path segment, so it cannot reshape the path it is put into.
 */
const GiB = 2 ** 30;
const tempDir = useTempDirs();
const tinyHub = useTinyGgufHub('tiny/Tiny-GGUF');

/** A constructed machine with room for the tiny models. */
const machine: PlanMachine = {
  gpus: [],
  host: { totalBytes: 2 * GiB, availableBytes: GiB },
  gpuSource: 'constructed for the test',
  hostBandwidth: async () => ({ gbPerS: 20, source: 'constructed for the test' }),
};

describe('a hub revision', () => {
  it('is refused before any request when it is not a branch, tag or commit name', async () => {
    const hub = await tinyHub.start();
    for (const revision of ['/etc/passwd', '../../etc', 'a//b', 'main/', '.git', 'a b', 'main?x=1', 'main%2F..']) {
      await expect(
        planModels({ source: `hf:tiny/Tiny-GGUF@${revision}` }, machine, { env: { HF_ENDPOINT: hub.url, HF_HOME: tempDir() } }),
      ).rejects.toThrow(
        `"hf:tiny/Tiny-GGUF@${revision}": ${JSON.stringify(revision)} is not a revision name: write a branch, tag or commit after the @`,
      );
    }
    expect(hub.requests).toEqual([]);
  });

  it('reaches the hub as one encoded path segment, slashes included', async () => {
    const hub = await tinyHub.start();
    await expect(
      planModels({ source: 'hf:tiny/Tiny-GGUF@refs/pr/3' }, machine, { env: { HF_ENDPOINT: hub.url, HF_HOME: tempDir() } }),
    ).rejects.toThrow('tiny/Tiny-GGUF has no revision "refs/pr/3"');
    expect(hub.requests.map((request) => request.path.split('?')[0])).toEqual(['/api/models/tiny/Tiny-GGUF/tree/refs%2Fpr%2F3']);
  });

  it('keeps the names git and the hub use', () => {
    for (const revision of ['main', 'v1.0', 'refs/pr/3', 'release-2024_01', '0123456789abcdef0123456789abcdef01234567'])
      expect(parseHubRef(`hf:tiny/Tiny-GGUF@${revision}`)).toEqual({ repo: 'tiny/Tiny-GGUF', revision });
    expect(parseHubRef('hf:tiny/Tiny-GGUF')).toEqual({ repo: 'tiny/Tiny-GGUF', revision: 'main' });
    expect(() => parseHubRef('hf:tiny/Tiny-GGUF@main@/etc/passwd')).toThrow(/is not a revision name/);
  });
});
