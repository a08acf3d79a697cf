import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { blockHashes, hashSentPrompts } from '../../src/main/runner/block-hashes';
import { numberHashes, runTrace } from '../../src/main/store/export-run';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import type { RequestRow } from '../../src/main/store/run-rows';
import { useTempDirs } from '../support/temp';
import { createBareRun } from '../support/stored-request';

const tempDir = useTempDirs();
const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe('prompt block hashes', () => {
  it('chains one hash per block, so equal hashes mean equal prompts up to that block', () => {
    const a = blockHashes([...ids(0, 1024), ...ids(5000, 100)]);
    const b = blockHashes([...ids(0, 1024), ...ids(9000, 300)]);
    const c = blockHashes([...ids(1, 512), ...ids(512, 512)]);
    expect(a).toHaveLength(3);
    expect(b.slice(0, 2)).toEqual(a.slice(0, 2));
    expect(b[2]).not.toBe(a[2]);
    // The second block of c equals a's second block token for token, but follows a different first block.
    expect(c[1]).not.toBe(a[1]);
    expect(a.every((hash) => /^[0-9a-f]{16}$/.test(hash))).toBe(true);
    expect(blockHashes([])).toEqual([]);
    expect(blockHashes(ids(0, 10), 4)).toHaveLength(3);
  });

  it('without a server only token-id prompts are hashed; equal prompts are tokenized once', async () => {
    const rows = await hashSentPrompts(
      new Map([
        [0, { kind: 'tokens' as const, ids: ids(0, 600) }],
        [1, { kind: 'text' as const, text: 'hello' }],
      ]),
      null,
    );
    expect(rows).toEqual([
      { seq: 0, hashes: blockHashes(ids(0, 600)) },
      { seq: 1, hashes: null },
    ]);
  });

  it('numbers hashes by first appearance across requests', () => {
    expect(numberHashes([['x', 'y'], ['x', 'z'], ['w']])).toEqual([[0, 1], [0, 2], [3]]);
  });

  it('exports measured requests with hashes as a trace, from the first scheduled time, and keys a private run’s hashes', () => {
    const row = (seq: number, fields: Partial<RequestRow>) =>
      ({ seq, warmup: 0, scheduled_ms: null, t0_ms: 0, prompt_tokens: 600, output_tokens: 4, block_hashes: null, ...fields }) as RequestRow;
    const trace = runTrace([
      row(0, { warmup: 1, t0_ms: 0, block_hashes: '["w"]' }),
      row(2, { scheduled_ms: 1300.4, t0_ms: 1301, block_hashes: '["a","c"]' }),
      row(1, { scheduled_ms: 1000, t0_ms: 1001, block_hashes: '["a","b"]' }),
      row(3, { scheduled_ms: 1500, block_hashes: null }),
    ])!;
    expect(
      trace
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual([
      { timestamp: 0, input_length: 600, output_length: 4, hash_ids: [0, 1] },
      { timestamp: 300, input_length: 600, output_length: 4, hash_ids: [0, 2] },
    ]);
    expect(runTrace([row(0, {})])).toBeNull();

    const db = openDatabase(path.join(tempDir(), 'h.db'));
    const store = new RunStore(db);
    const make = (isPrivate: boolean) => createBareRun(store, { kind: 'workload', private: isPrivate });
    const stored = (runId: string) => {
      store.addRequests(runId, [
        {
          seq: 0,
          warmup: false,
          t0Ms: 0,
          headersMs: 1,
          chunkOffsetsMs: [],
          promptText: 'p',
          outputText: 'o',
          httpStatus: 200,
          promptTokens: 600,
          usage: null,
          finishReason: 'stop',
          errorClass: null,
          errorMessage: null,
          timings: null,
          metrics: {
            ttft_ms: 1,
            e2e_ms: 2,
            tpot_ms: null,
            queue_ms: null,
            client_overhead_ms: null,
            output_tokens: 1,
            output_tokens_source: 'usage',
          },
        },
      ] as never);
      store.setBlockHashes(runId, [{ seq: 0, hashes: ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb'] }]);
      return JSON.parse(store.requests(runId)[0]!.block_hashes!) as string[];
    };
    expect(stored(make(false))).toEqual(['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb']);
    const sealed = stored(make(true));
    expect(sealed).toHaveLength(2);
    expect(sealed[0]).not.toBe('aaaaaaaaaaaaaaaa');
    expect(sealed[0]).toMatch(/^[0-9a-f]{16}$/);
    db.close();
  });
});
