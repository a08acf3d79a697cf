import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { evaluateAcceptance, evaluateAcceptanceAsync } from '../../src/main/workload/acceptance';
import { REGEX_BUDGET_MS } from '../../src/main/workload/regex-budget';

// Exponential backtracking: about 0.5 s at 26 a's on a fast machine, doubling per character.
const EVIL = '^(a+)+$';
const VICTIM = `${'a'.repeat(30)}!`;
const exceeded = new RegExp(`^regex exceeded ${REGEX_BUDGET_MS} ms`);

describe('user regexes run under a time budget', () => {
  it('fails a catastrophic acceptance regex with "regex exceeded N ms" and judges the other checks', () => {
    const started = performance.now();
    const result = evaluateAcceptance([{ regex: EVIL }, { contains: 'a' }], VICTIM, null);
    const elapsed = performance.now() - started;
    expect(result.accepted).toBe(false);
    expect(result.results[0]).toMatchObject({ check: 'regex', passed: false });
    expect(result.results[0]!.detail).toMatch(exceeded);
    expect(result.results[1]).toEqual({ check: 'contains', passed: true });
    // The worker's first start is not counted against the pattern, but the wait is bounded.
    expect(elapsed).toBeLessThan(REGEX_BUDGET_MS + 2000);
  });

  it('bounds JSON schema patterns the same way', () => {
    const schema = { type: 'object', properties: { name: { type: 'string', pattern: EVIL } } };
    const result = evaluateAcceptance([{ json_schema: schema }], JSON.stringify({ name: VICTIM }), null);
    expect(result.accepted).toBe(false);
    expect(result.results[0]!.detail).toMatch(exceeded);
    expect(
      evaluateAcceptance(
        [{ json_schema: { type: 'object', properties: { name: { type: 'string', pattern: '^a+$' } } } }],
        '{"name":"aaa"}',
        null,
      ).accepted,
    ).toBe(true);
  });

  it('keeps the event loop free while a pattern runs: a timer set meanwhile fires before the answer', async () => {
    await evaluateAcceptanceAsync([{ regex: '^warm$' }], 'warm', null);
    const order: string[] = [];
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        order.push('timer');
        resolve();
      }, 5),
    );
    const judged = evaluateAcceptanceAsync([{ regex: EVIL }], VICTIM, null).then((result) => {
      order.push('answer');
      return result;
    });
    const [result] = await Promise.all([judged, timer]);
    expect(result.results[0]!.detail).toMatch(exceeded);
    // The answer comes only once the pattern has used its whole budget; a loop blocked meanwhile would run the timer after it.
    expect(order).toEqual(['timer', 'answer']);
  });

  it('still answers ordinary checks correctly, and after a timeout', async () => {
    expect(evaluateAcceptance([{ regex: '^The' }], 'The capital is Paris.', null).accepted).toBe(true);
    expect(evaluateAcceptance([{ regex: 'Paris\\.$' }], 'The capital is Rome.', null).accepted).toBe(false);
    expect(
      (await evaluateAcceptanceAsync([{ regex: '^The' }, { regex: 'Rome' }], 'The capital is Paris.', null)).results.map((r) => r.passed),
    ).toEqual([true, false]);
    // What a check costs is a benchmark figure (npm run bench), not a test: a busy machine can slow any of them.
  });
});

describe('an awaited regex check in a process with nothing else pending', () => {
  it('keeps the process alive until the answer arrives (no exit 13 mid-check)', async () => {
    const { spawnSync } = await import('node:child_process');
    const fs = await import('node:fs');
    const os = await import('node:os');
    const path = await import('node:path');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-regex-'));
    const script = path.join(dir, 'check.mts');
    const acceptance = path.resolve(__dirname, '../../src/main/workload/acceptance.ts');
    fs.writeFileSync(
      script,
      `import { evaluateAcceptanceAsync } from ${JSON.stringify(acceptance)};\nconst result = await evaluateAcceptanceAsync([{ regex: '\\\\bParis\\\\b' }], 'It is Paris.', null);\nconsole.log(JSON.stringify(result));\n`,
    );
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 });
    fs.rmSync(dir, { recursive: true, force: true });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ accepted: true });
  }, 90_000);
});
