import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createServices } from '../../src/main/services';
import { shellAccess } from '../../src/main/services/access';
import { taskEnd } from '../support/tasks';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
// Far more requests than the server's 16 slots and the store's batches take at once, so slots are waited for and
// many batches are written while the app is asked for its runs.
const REQUESTS = 2_000;

describe('load', () => {
  it('stores every one of 2,000 requests at concurrency 64 while the app keeps answering', async () => {
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
      let runId: string | null = null;
      const finished = taskEnd(container.events, 'run', {
        onProgress: (progress) => {
          runId ??= progress.detail.runId;
        },
      });
      const { jobId } = await container.services.runs.start({
        workload,
        model: 'demo:q4_k_m',
        endpoint: null,
        profileName: 'wide',
        concurrency: 64,
        rate: null,
        requests: REQUESTS,
        durationS: null,
        warmup: 0,
        private: false,
      });
      expect(jobId).toEqual(expect.any(String));
      // The UI's calls while the run writes. Each answer carries how many of the run's requests were stored by
      // then: an app that answered only before or after the writing, or stored everything at the end, leaves a
      // quarter of the run without an answer, however fast or slow the machine is.
      const storedAtAnswer: number[] = [];
      let done = false;
      const poller = (async () => {
        while (!done) {
          const runs = await container.services.runs.list();
          const run = runs.find((item) => item.runId === runId);
          if (run) storedAtAnswer.push(run.requests);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const state = await finished;
      done = true;
      await poller;
      const quarters = [0, 1, 2, 3].map(
        (quarter) =>
          storedAtAnswer.filter((stored) => stored >= (quarter * REQUESTS) / 4 && stored < ((quarter + 1) * REQUESTS) / 4).length,
      );
      console.log(
        `[load] ${REQUESTS} requests at concurrency 64: ${state.detail.summary?.throughput.requests_per_s?.toFixed(1)} req/s; runs.list answers per quarter of the requests stored: ${quarters.join(', ')}`,
      );
      expect(state.error).toBeNull();
      expect(state.detail.summary!.requests.attempted).toBe(REQUESTS);
      expect(state.detail.summary!.requests.failed).toBe(0);
      const detail = await container.services.runs.get(state.detail.runId!);
      expect(detail.item.requests).toBe(REQUESTS);
      for (const answers of quarters) expect(answers, `answers per quarter: ${quarters.join(', ')}`).toBeGreaterThan(0);
    } finally {
      await container.dispose();
    }
  }, 600_000);
});
