import { describe, expect, it } from 'vitest';
import { identify, isAlive } from '../../src/main/core/process-identity';
import { runFirstRequest } from '../../src/main/demo/first-request';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { requireEngine } from '../support/engine';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('first end-to-end path against the real llama-server', () => {
  it('measures one streamed completion, stores it, and leaves no process behind', async () => {
    const harness = await serverHarness(tempDir());
    try {
      const result = await runFirstRequest({
        engine: await requireEngine(),
        servers: harness.servers,
        store: harness.store.runs,
        maxTokens: 24,
        model: { ref: 'demo:q4_k_m', path: await resolveModelRef('demo:q4_k_m') },
        profile: { ...defaultProfile(), contextSize: 1024 },
      });
      expect(result.serverPid).not.toBeNull();
      expect(isAlive(identify(result.serverPid!))).toBe(false);
      const m = result.metrics;
      expect(m.output_tokens).toBe(24);
      expect(m.output_tokens_source).toBe('usage');
      expect(m.ttft_ms).toBeGreaterThan(0);
      expect(m.e2e_ms).toBeGreaterThan(m.ttft_ms!);
      expect(m.tpot_ms).toBeGreaterThan(0);
      expect(result.timings?.predicted_n).toBe(24);
      expect(result.timings!.prompt_n).toBeGreaterThan(10);
      expect(result.finishReason).toBe('length');
      expect(result.coldStart!.spawnToFirstTokenMs).toBeGreaterThan(result.coldStart!.spawnToReadyMs);

      const runs = harness.store.runs;
      expect(runs.getRun(result.runId)?.status).toBe('completed');
      expect(runs.countRequests(result.runId)).toBe(1);
      const offsets = runs.chunkOffsets(result.runId, 0);
      expect(offsets.length).toBe(m.itl_ms.length + 1);
      expect(offsets[0]).toBeCloseTo(m.ttft_ms!, 6);
    } finally {
      await harness.dispose();
    }
  });
});
