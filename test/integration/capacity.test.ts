import fs from 'node:fs';
import Database from 'better-sqlite3';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inferlab, inferlabJson } from '../support/cli';
import { experimentSpecFromArgs } from '../../src/main/cli/commands/experiment';
import { checkExperimentSpec } from '../../src/main/services/experiment-spec';
import { shellAccess } from '../../src/main/services/access';
import { useTempDirs } from '../support/temp';
import { decideQuantile } from '../../src/main/metrics/quantile-slo';

const tempDir = useTempDirs();
// At p90 a look is 86 requests: enough for a limit between two loads to be decided rather than left inconclusive.
const PERCENTILE = 90;
// Where only the conversations' structure matters, the median: a look is then 14 requests (3 conversations).
const USERS_PERCENTILE = 50;

interface Step {
  load: number;
  decision: 'meets' | 'misses' | 'inconclusive' | 'invalid';
  invalid_reason: string | null;
  client_bound_samples: number;
  contaminated_samples: number;
  requests: number;
  percentile_ms: Record<string, number | null>;
  goodput_requests_per_s: number | null;
  throughput_requests_per_s: number | null;
}
interface Capacity {
  capacity: number | null;
  interval: { low: number; high: number | null } | null;
  requests_per_look: number;
  steps: Step[];
}

/** Fixed-length answers, so the queue each load builds depends on the load alone. */
function fixedWorkload(dir: string): string {
  const file = path.join(dir, 'fixed.yaml');
  fs.writeFileSync(
    file,
    'name: fixed\ndefaults: { max_tokens: 8, temperature: 0, ignore_eos: true }\ngroups:\n  - name: g\n    items:\n      - { id: a, prompt: "Tell me a story." }\n      - { id: b, prompt: "List some colours." }\n',
  );
  return file;
}

async function capacity(workload: string, db: string, ttftMs: number, maxLoad: number): Promise<Capacity> {
  const result = await inferlab([
    'experiment',
    'capacity',
    '--model',
    'demo:q8_0',
    '--workload',
    workload,
    '--slo',
    `ttft=${ttftMs}`,
    '--percentile',
    String(PERCENTILE),
    '--by',
    'concurrency',
    '--max-load',
    String(maxLoad),
    '--db',
    db,
    '--json',
  ]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout).capacity as Capacity;
}

/** Each step in one line, for a failure message: what was decided, and what was set aside. */
const describeSteps = (result: Capacity) =>
  result.steps
    .map(
      (step) =>
        `load ${step.load}: ${step.decision}${step.invalid_reason ? ` (${step.invalid_reason})` : ''}, ${step.requests} requests, ` +
        `${step.client_bound_samples} client-bound and ${step.contaminated_samples} contaminated samples set aside`,
    )
    .join('; ');

/**
 * The loose search, which must climb to the ceiling. A load whose samples other processes kept
 * competing with, or the client fell behind on, is set aside, rightly (contention.test.ts): that
 * is not this test's subject, so a search a busy moment spoiled is taken again, up to twice (once
 * on a two-core CI machine both the first search and the one after it lost load 4 to a client
 * that fell behind).
 */
async function looseSearch(workload: string, db: string): Promise<Capacity> {
  let search = await capacity(workload, db, 100_000, 4);
  for (let again = 1; again <= 2; again++) {
    const spoiled = search.steps.some((step) => step.decision !== 'meets' && step.client_bound_samples + step.contaminated_samples > 0);
    if (!spoiled) break;
    console.log(`[capacity] the loose search again (${again} of 2): ${describeSteps(search)}`);
    search = await capacity(workload, db, 100_000, 4);
  }
  return search;
}

function nearestRank(values: number[], percentile: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((percentile / 100) * sorted.length) - 1]!;
}

describe('capacity under an SLO, against the real server', () => {
  it('a loose SLO yields a higher capacity than a tight one, each inside its interval, and a run at the lower bound meets the SLO', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'c.db');
    const workload = fixedWorkload(dir);

    // Loose: no load up to 4 can miss a 100 s TTFT, so the search climbs to the ceiling.
    const loose = await looseSearch(workload, db);
    expect(loose.capacity, describeSteps(loose)).toBe(4);
    expect(loose.interval).toEqual({ low: 4, high: null });
    const measured = new Map(loose.steps.map((step) => [step.load, step]));
    const single = measured.get(1)!.percentile_ms.ttft_ms!;
    // With one slot, concurrent requests queue behind each other's answers: the percentile TTFT grows with the
    // load. Counted in the service time each step measured itself (one over its throughput), so that a slower
    // moment of the machine does not pass for queueing.
    const inServiceTimes = (load: number) =>
      measured.get(load)!.percentile_ms.ttft_ms! * (measured.get(load)!.throughput_requests_per_s! / 1000);
    const [singleQueue, pairQueue, quadQueue] = [1, 2, 4].map(inServiceTimes);
    expect(pairQueue!).toBeGreaterThan(singleQueue!);
    expect(quadQueue!).toBeGreaterThan(pairQueue!);
    for (const step of loose.steps) {
      expect(step.decision, describeSteps(loose)).toBe('meets');
      expect(step.requests).toBe(loose.requests_per_look);
      // Every request met a 100 s limit, so goodput is the whole throughput.
      expect(step.goodput_requests_per_s).toBeCloseTo(step.throughput_requests_per_s!, 6);
    }

    // Tight: a limit midway (geometrically) between what one and four concurrent requests give, about twice
    // from each, so load 1 meets it and load 4 misses it beyond the noise of a shared two-core machine; the
    // loads between may land on either side or stay undecided.
    const quad = measured.get(4)!.percentile_ms.ttft_ms!;
    const tightMs = Math.round(Math.sqrt(single! * quad));
    const tight = await capacity(workload, db, tightMs, 4);
    expect(tight.capacity).not.toBeNull();
    expect(tight.capacity!).toBeLessThan(loose.capacity!);
    expect(tight.interval!.low).toBe(tight.capacity);
    // A miss above the capacity bounds it: the limit lies in [capacity, lowest miss).
    // On a shared two-core machine a load above the limit may stay undecided rather than shown to miss; then no
    // upper bound is claimed and the capacity is a lower bound.
    const misses = tight.steps.filter((step) => step.decision === 'misses').map((step) => step.load);
    if (misses.length > 0) {
      expect(tight.interval!.high).toBe(Math.min(...misses));
      expect(tight.interval!.high!).toBeGreaterThan(tight.capacity!);
    } else expect(tight.interval!.high).toBeNull();
    for (const step of tight.steps) {
      if (step.load <= tight.capacity!) expect(step.decision).toBe('meets');
      const good = step.goodput_requests_per_s!;
      if (step.decision === 'misses') expect(good).toBeLessThan(step.throughput_requests_per_s!);
    }

    // A separate run at the interval's lower bound, set up as the search's samples are (two warm-up requests,
    // no host-memory prompt cache), meets the tight SLO at the same percentile. The run is a new measurement
    // at another moment: its limit is scaled by how much slower than during the search's step at that load
    // this machine served it (one slot: the service time is one over the throughput).
    const run = await inferlab([
      'run',
      '--workload',
      workload,
      '--model',
      'demo:q8_0',
      '--set',
      'cacheRamMib=0',
      '--warmup',
      '2',
      '--concurrency',
      String(tight.interval!.low),
      '--requests',
      String(tight.requests_per_look),
      '--db',
      db,
      '--json',
    ]);
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as { run_id: string; throughput: { requests_per_s: number } };
    const exported = path.join(dir, 'export');
    const exportResult = await inferlab(['export', summary.run_id, '--out', exported, '--db', db]);
    expect(exportResult.code, exportResult.stderr).toBe(0);
    const requests = fs
      .readFileSync(path.join(exported, 'requests.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { ttft_ms: number | null; warmup: boolean })
      .filter((row) => !row.warmup);
    expect(requests).toHaveLength(tight.requests_per_look);
    const searched = tight.steps.find((step) => step.load === tight.interval!.low)!;
    const slowdown = Math.max(1, searched.throughput_requests_per_s! / summary.throughput.requests_per_s);
    // The search showed the share above the limit to be under 10 %; a fresh sample of the same load has its own
    // noise, so near the limit its share may come out a little above 10 %. What it must not do is show the load
    // missing: as many requests above the limit as would be rare (α 0.01) were the share 10 % or less.
    const limit = tightMs * slowdown;
    const above = requests.filter((row) => row.ttft_ms === null || row.ttft_ms > limit).length;
    expect(
      decideQuantile(above, requests.length, PERCENTILE, 0, 0.01),
      `limit ${tightMs} ms, this run ${slowdown.toFixed(2)}× slower than the search: ${above} of ${requests.length} above ${limit.toFixed(1)} ms (p${PERCENTILE} ${nearestRank(
        requests.map((row) => row.ttft_ms ?? Number.POSITIVE_INFINITY),
        PERCENTILE,
      ).toFixed(1)} ms)`,
    ).not.toBe('misses');
  }, 300_000);
});

describe('capacity in concurrent users of a conversation workload', () => {
  it('runs conversations per look, gives each user a server slot, and refuses a workload without conversations', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'u.db');
    // Five-turn conversations without think time, so the test spends its time on requests.
    const conversations = path.join(dir, 'talk.yaml');
    fs.writeFileSync(
      conversations,
      'name: talk\ndefaults: { temperature: 0 }\ngroups:\n  - name: chat\n    generate:\n      conversations: { count: 4, turns: 5, user_tokens: 20, answer_tokens: 8 }\n',
    );
    const experiment = await inferlabJson(
      [
        'experiment',
        'capacity',
        '--model',
        'demo:q8_0',
        '--workload',
        conversations,
        '--by',
        'users',
        '--slo',
        'ttft=100000',
        '--percentile',
        String(USERS_PERCENTILE),
        '--max-load',
        '2',
      ],
      db,
    );
    expect(experiment.protocol.workload).toBe('talk');
    const capacity = experiment.capacity as Capacity & { unit: string; rule: string };
    expect(capacity).toMatchObject({ capacity: 2, unit: 'concurrent users', interval: { low: 2, high: null } });
    // 14 requests per look are 3 conversations of five turns: every turn is judged.
    expect(capacity.rule).toMatch(/a users look is 3 conversations \(about 14 requests\)/);
    for (const step of capacity.steps) expect(step.requests).toBe(15);
    const handle = new Database(db, { readonly: true });
    const slots = capacity.steps.map((step) => {
      const runIds = (step as Step & { run_ids: string[] }).run_ids;
      const row = handle.prepare('SELECT server_json FROM runs WHERE id = ?').get(runIds[0]) as { server_json: string };
      return [step.load, JSON.parse(row.server_json).effectiveConfig.slots];
    });
    handle.close();
    expect(slots).toEqual([
      [1, 1],
      [2, 2],
    ]);

    const refused = await inferlab([
      'experiment',
      'capacity',
      '--model',
      'demo:q8_0',
      '--by',
      'users',
      '--workload',
      'chat-short',
      '--slo',
      'ttft=500',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/a capacity in users needs a conversation workload .* chat-short has none: use --by concurrency/);
    // Without --workload, users run the built-in conversations.
    const spec = experimentSpecFromArgs(['capacity', '--model', 'demo:q8_0', '--by', 'users', '--slo', 'ttft=500']).spec;
    await expect(checkExperimentSpec(spec, shellAccess())).resolves.toMatchObject({ workload: { def: { name: 'multi-turn-chat' } } });
  }, 300_000);
});
