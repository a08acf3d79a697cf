import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab, inferlabJson } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

// The inner loop's real-server check (npm run test:quick): the CLI, a managed server, streaming and the store, in seconds.
describe('inferlab run end to end, the quick check', () => {
  it('measures a short run on a managed server, stores every request and leaves the run completed', async () => {
    const db = path.join(tempDir(), 'smoke.db');
    const summary = await inferlabJson(
      ['run', '--workload', 'chat-short', '--model', 'demo:q4_k_m', '--requests', '4', '--concurrency', '2'],
      db,
    );
    expect(summary.status).toBe('completed');
    expect(summary.requests).toMatchObject({ attempted: 4, completed: 4, failed: 0 });
    expect(summary.metrics.ttft_ms.p50).toBeGreaterThan(0);
    expect(summary.metrics.tpot_ms.p50).toBeGreaterThan(0);
    const listed = await inferlab(['runs', 'list', '--db', db, '--json']);
    expect(JSON.parse(listed.stdout).map((run: { run_id: string }) => run.run_id)).toEqual([summary.run_id]);
  });
});
