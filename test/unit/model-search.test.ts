import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { searchHubModels } from '../../src/main/models/hub/hub-search';
import { ErrorCode } from '../../src/shared/errors';
import { startStandInHub, tinyGgufRepoFiles, type StandInHub } from '../support/stand-in-hub';
import { appErrorOf } from '../support/failure';

let hub: StandInHub | null = null;
let other: http.Server | null = null;
afterEach(async () => {
  await hub?.close();
  hub = null;
  await new Promise((resolve) => (other ? other.close(resolve) : resolve(null)));
  other = null;
});

const failureOf = appErrorOf;

describe('searching the hub by name (stand-in hub on a local port)', () => {
  it('finds repositories with GGUF files whose name holds every word, most downloaded first, as hf: names', async () => {
    const gguf = tinyGgufRepoFiles();
    hub = await startStandInHub({
      repos: {
        'small/Qwen3-8B-GGUF': { files: gguf, downloads: 10 },
        'big/Qwen3-8B-Instruct-GGUF': { files: gguf, downloads: 5000, gatedFor: ['token'] },
        'other/Llama-8B-GGUF': { files: gguf, downloads: 90_000 },
        // Safetensors only: nothing a llama-server could load.
        'plain/Qwen3-8B': { files: { 'model.safetensors': Buffer.from('x') }, downloads: 1_000_000 },
      },
    });
    const env = { HF_ENDPOINT: hub.url };
    const matches = await searchHubModels('qwen3 8B', { env });
    expect(matches.map((match) => [match.source, match.downloads, match.gated])).toEqual([
      ['hf:big/Qwen3-8B-Instruct-GGUF', 5000, true],
      ['hf:small/Qwen3-8B-GGUF', 10, false],
    ]);
    expect(matches[0]!.updatedAt).toBe('2026-01-01T00:00:00.000Z');
    // What the client asked for: the hub's GGUF tag and its download order.
    const asked = new URL(hub.requests.find((request) => request.path.startsWith('/api/models?'))!.path, hub.url).searchParams;
    expect([asked.get('search'), asked.getAll('filter'), asked.get('sort')]).toEqual(['qwen3 8B', ['gguf'], 'downloads']);
    expect(await searchHubModels('mistral', { env })).toEqual([]);
  });

  it('refuses a query too short to mean a name, before any request', async () => {
    hub = await startStandInHub({ repos: {} });
    const error = await failureOf(searchHubModels(' q ', { env: { HF_ENDPOINT: hub.url } }));
    expect(error.code).toBe(ErrorCode.Usage);
    expect(error.message).toMatch(/2 to 200 characters/);
    expect(hub.requests).toHaveLength(0);
  });

  it('says what to do when the hub refuses, limits the rate or cannot be reached', async () => {
    let status = 500;
    other = http.createServer((_request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end('{"error":"boom"}');
    });
    await new Promise<void>((resolve) => other!.listen(0, '127.0.0.1', resolve));
    const env = { HF_ENDPOINT: `http://127.0.0.1:${(other.address() as AddressInfo).port}` };
    expect((await failureOf(searchHubModels('qwen3', { env }))).message).toMatch(
      /answered 500 to the model search: type the repository as hf:OWNER\/REPO/,
    );
    status = 429;
    expect((await failureOf(searchHubModels('qwen3', { env }))).message).toMatch(/rate-limiting searches \(429\).*HF_TOKEN/);
    await new Promise((resolve) => other!.close(resolve));
    other = null;
    expect((await failureOf(searchHubModels('qwen3', { env }))).message).toMatch(/cannot reach the hub at http:\/\/127\.0\.0\.1:\d+/);
  });
});
