import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { endpointHeaders, parseOpenAiModels } from '../../src/main/engines/adapters/endpoints';
import { sglangAdapter, splitCommand, vllmAdapter } from '../../src/main/engines/adapters/python-servers';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { deriveRequestMetrics } from '../../src/main/metrics/request-metrics';
import { streamCompletion } from '../../src/main/client/stream-client';

// Fixtures are constructed from each engine's documented format (see test/fixtures/engines/README.md).
const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'engines', name), 'utf8');
const profile = { ...defaultProfile(), contextSize: 8192, parallelSlots: 16, batchSize: 4096, extraFlags: ['--seed', '1'] };

describe('vLLM and SGLang launch', () => {
  it('builds vLLM argv with every setting explicit and no shell', () => {
    const { program, args } = vllmAdapter('/opt/venv/bin/vllm').launch({ modelPath: 'Qwen/Qwen2.5-7B-Instruct', port: 9000, profile });
    expect(program).toBe('/opt/venv/bin/vllm');
    expect(args).toEqual([
      'serve',
      'Qwen/Qwen2.5-7B-Instruct',
      '--host',
      '127.0.0.1',
      '--port',
      '9000',
      '--max-model-len',
      '8192',
      '--max-num-seqs',
      '16',
      '--max-num-batched-tokens',
      '4096',
      '--kv-cache-dtype',
      'auto',
      '--enable-prefix-caching',
      '--seed',
      '1',
    ]);
    const cold = vllmAdapter('python -m vllm.entrypoints.openai.api_server').launch({
      modelPath: '/m',
      port: 1,
      profile: { ...profile, cacheRamMib: 0 },
    });
    expect(cold.program).toBe('python');
    expect(cold.args.slice(0, 3)).toEqual(['-m', 'vllm.entrypoints.openai.api_server', '/m']);
    expect(cold.args).toContain('--no-enable-prefix-caching');
  });

  it('builds SGLang argv and declares its cache reset endpoint', () => {
    const adapter = sglangAdapter('"/opt/my venv/bin/python" -m sglang.launch_server');
    const { program, args } = adapter.launch({ modelPath: '/models/qwen', port: 9001, profile });
    expect(program).toBe('/opt/my venv/bin/python');
    expect(args).toEqual([
      '-m',
      'sglang.launch_server',
      '--model-path',
      '/models/qwen',
      '--host',
      '127.0.0.1',
      '--port',
      '9001',
      '--context-length',
      '8192',
      '--max-running-requests',
      '16',
      '--chunked-prefill-size',
      '4096',
      '--kv-cache-dtype',
      'auto',
      '--enable-metrics',
      '--seed',
      '1',
    ]);
    expect(adapter.cacheReset).toEqual({ method: 'POST', path: '/flush_cache' });
    expect(adapter.classifyFault(['torch.OutOfMemoryError: CUDA out of memory.'])?.code).toBe('out_of_memory');
    expect(adapter.capabilities.serverTimings).toBe(false);
  });

  it('splits a configured command without a shell', () => {
    expect(splitCommand('python -m "a b" ; rm -rf /')).toEqual(['python', '-m', 'a b', ';', 'rm', '-rf', '/']);
  });
});

describe('unmanaged endpoints', () => {
  it('parses /v1/models and takes the API key from the environment only', () => {
    expect(parseOpenAiModels(JSON.parse(fixture('openai-models.json')))).toEqual(['Qwen/Qwen2.5-7B-Instruct']);
    expect(endpointHeaders({ INFERLAB_API_KEY: 'k' })).toEqual({ authorization: 'Bearer k' });
    expect(endpointHeaders({})).toEqual({});
  });

  it('measures a vLLM-style stream (usage, no timings) with the same client', async () => {
    // A local replay of the fixture body: the client under test is real, the engine is not.
    const body = fixture('vllm-stream.txt');
    const replay = http.createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(body);
    });
    await new Promise<void>((resolve) => replay.listen(0, '127.0.0.1', resolve));
    try {
      const port = (replay.address() as { port: number }).port;
      const completion = await streamCompletion({ baseUrl: `http://127.0.0.1:${port}`, body: { messages: [] } });
      expect(completion.error).toBeNull();
      expect(completion.text).toBe('Hello there!');
      expect(completion.finishReason).toBe('stop');
      expect(completion.usage).toEqual({ prompt_tokens: 12, completion_tokens: 3, cached_tokens: null });
      expect(completion.timings).toBeNull();
      const metrics = deriveRequestMetrics(completion);
      expect(metrics.output_tokens).toBe(3);
      expect(metrics.client_overhead_ms).toBeNull();
      expect(metrics.queue_ms).toBeNull();
    } finally {
      replay.close();
    }
  });
});
