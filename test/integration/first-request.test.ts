import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/shared/errors';
import type { AppError } from '../../src/main/core/errors';
import { identify, isAlive } from '../../src/main/core/process-identity';
import { runFirstRequest } from '../../src/main/demo/first-request';
import { defaultLlamaServerSettings } from '../../src/main/engines/llamacpp/launch-args';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { createKeepAliveAgent, streamCompletion } from '../../src/main/runner/stream-client';
import { LlamaServerProcess } from '../../src/main/server/llama-server-process';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { requireEngine } from '../support/engine';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const settings = { ...defaultLlamaServerSettings(), contextSize: 1024 };

describe('first end-to-end path against the real llama-server', () => {
  it('measures one streamed completion, stores it, and leaves no process behind', async () => {
    const engine = await requireEngine();
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const store = new RunStore(db);
    const result = await runFirstRequest({ engine, model: { ref: 'demo:q4_k_m', path: await resolveModelRef('demo:q4_k_m') }, store, maxTokens: 24, settings });
    expect(isAlive(identify(result.serverPid))).toBe(false);
    const m = result.metrics;
    expect(m.output_tokens).toBe(24);
    expect(m.output_tokens_source).toBe('usage');
    expect(m.ttft_ms).toBeGreaterThan(0);
    expect(m.e2e_ms).toBeGreaterThan(m.ttft_ms!);
    expect(m.tpot_ms).toBeGreaterThan(0);
    expect(result.timings?.predicted_n).toBe(24);
    expect(result.timings!.prompt_n).toBeGreaterThan(10);
    expect(result.finishReason).toBe('length');

    const run = store.getRun(result.runId)!;
    expect(run.status).toBe('completed');
    expect(store.countRequests(result.runId)).toBe(1);
    const offsets = store.chunkOffsets(result.runId, 0);
    expect(offsets.length).toBe(m.itl_ms.length + 1);
    expect(offsets[0]).toBeCloseTo(m.ttft_ms!, 6);
    db.close();
  });

  it('reports a server that exits before ready with its log tail, and leaves nothing running', async () => {
    const engine = await requireEngine();
    const broken = path.join(tempDir(), 'truncated.gguf');
    fs.writeFileSync(broken, fs.readFileSync(await resolveModelRef('demo:q8_0')).subarray(0, 4096));
    const server = new LlamaServerProcess(engine, broken, settings);
    const error = (await server.start().catch((reason: unknown) => reason)) as AppError;
    expect(error.code).toBe(ErrorCode.ServerStartFailed);
    expect(error.message).toMatch(/exited before it was ready/);
    expect(error.message).toMatch(/Last log lines:\n[\s\S]*(failed to load|error)/i);
    expect(server.exited).not.toBeNull();
    await server.exited;
  });

  it('stops the server on request and classifies HTTP and connection failures', async () => {
    const engine = await requireEngine();
    const server = new LlamaServerProcess(engine, await resolveModelRef('demo:q8_0'), settings);
    const ready = await server.start();
    const agent = createKeepAliveAgent(2);
    try {
      const rejected = await streamCompletion({ baseUrl: ready.baseUrl, agent, body: { messages: 'not a list', max_tokens: 4 } });
      expect(rejected.error?.class).toBe('http_status');
      expect(rejected.httpStatus).toBeGreaterThanOrEqual(400);
    } finally {
      agent.destroy();
      await server.stop();
    }
    expect(isAlive(identify(ready.pid))).toBe(false);
    const refused = await streamCompletion({ baseUrl: ready.baseUrl, body: { messages: [{ role: 'user', content: 'x' }] } });
    expect(refused.error?.class).toBe('connect');
  });
});
