import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunJobState } from '../../src/shared/contract';
import { createServices } from '../../src/main/services';
import { shellAccess } from '../../src/main/services/access';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('load', () => {
  it('stores every one of 10,000 requests at concurrency 64 while the app keeps answering', async () => {
    const dir = tempDir();
    const workload = path.join(dir, 'tiny.yaml');
    fs.writeFileSync(
      workload,
      'name: tiny\ndefaults: { max_tokens: 2, temperature: 0, ignore_eos: true }\ngroups:\n  - name: g\n    items:\n      - { id: a, prompt: "Hi" }\n      - { id: b, prompt: "Yo" }\n',
    );
    const container = await createServices({ dbPath: path.join(dir, 'load.db'), access: shellAccess() });
    try {
      await container.services.servers.saveProfile({
        ...(await container.services.servers.defaultProfile()),
        name: 'wide',
        parallelSlots: 16,
        contextSize: 4096,
      });
      const finished = new Promise<RunJobState>((resolve) =>
        container.events.on((event) => {
          const state = event.payload as RunJobState;
          if (event.name === 'run.progress' && (state.phase === 'finished' || state.phase === 'failed')) resolve(state);
        }),
      );
      const { jobId } = await container.services.runs.start({
        workload,
        model: 'demo:q4_k_m',
        endpoint: null,
        profileName: 'wide',
        concurrency: 64,
        rate: null,
        requests: 10_000,
        durationS: null,
        warmup: 0,
        private: false,
      });
      expect(jobId).toEqual(expect.any(String));
      // The UI's calls while the run writes: the slowest answer is printed and held to a loose bound.
      let slowest = 0;
      let calls = 0;
      let done = false;
      const poller = (async () => {
        while (!done) {
          const started = performance.now();
          await container.services.runs.list();
          slowest = Math.max(slowest, performance.now() - started);
          calls += 1;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      })();
      const state = await finished;
      done = true;
      await poller;
      console.log(
        `[load] 10,000 requests at concurrency 64: ${state.summary?.throughput.requests_per_s?.toFixed(1)} req/s; slowest of ${calls} runs.list calls during the run: ${slowest.toFixed(1)} ms`,
      );
      expect(state.error).toBeNull();
      expect(state.summary!.requests.attempted).toBe(10_000);
      expect(state.summary!.requests.failed).toBe(0);
      const detail = await container.services.runs.get(state.runId!);
      expect(detail.item.requests).toBe(10_000);
      expect(calls).toBeGreaterThan(5);
      expect(slowest).toBeLessThan(2000);
    } finally {
      await container.dispose();
    }
  }, 600_000);
});
