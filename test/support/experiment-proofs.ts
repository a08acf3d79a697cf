import Database from 'better-sqlite3';
import { expect } from 'vitest';
import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { machineReport } from './machine';

/**
 * What a quantization experiment over demo f16, q8_0 and q4_k_m must show on any machine: the
 * files in size order, the baseline agreeing with itself, KLD growing as bits shrink, memory
 * measured where the product sees a GPU and null (never zero) where it sees none, and the
 * recommendation made on the memory that was measured.
 */
export async function expectDemoQuantizationsProven(quant: ExperimentResult, windows: number): Promise<void> {
  const [f16, q8, q4] = quant.conditions;
  expect(quant.conditions.map((condition) => condition.name)).toEqual(['f16', 'q8_0', 'q4_k_m']);
  expect(f16!.file_bytes!).toBeGreaterThan(q8!.file_bytes!);
  expect(q8!.file_bytes!).toBeGreaterThan(q4!.file_bytes!);
  // The baseline's second untimed pass, against its first: the noise floor, over every item.
  expect(f16!.token_agreement).toMatchObject({ items: 8, error: null });
  expect(q4!.token_agreement!.items).toBe(8);
  expect(f16!.kld_mean!).toBeLessThan(1e-6);
  expect(q4!.kld_mean!).toBeGreaterThan(q8!.kld_mean!);
  for (const condition of quant.conditions) expect(condition.run_ids).toHaveLength(windows);
  expect(f16!.load_ms!).toBeGreaterThan(0);
  // What the expectation follows is where the engine runs, not whether a GPU is listed: a CPU engine on a GPU box
  // (a driver without the CUDA runtime) holds no VRAM, so the device's reading may rightly be 0.
  const { gpus, engineBackend } = await machineReport();
  if (gpus.length === 0) expect(f16!.vram).toEqual({ baseline_mib: null, peak_mib: null, server_mib: null });
  else if (engineBackend === 'cpu') expect(f16!.vram!.peak_mib!).toBeGreaterThanOrEqual(0);
  else expect(f16!.vram!.peak_mib!).toBeGreaterThan(0);
  const serverMib = quant.conditions.map((condition) => condition.vram?.server_mib ?? null);
  // Any gate a condition failed, named with its detail: a recommendation that went elsewhere says why.
  const failedGates = (quant.recommendation!.gates ?? [])
    .flatMap((gate) =>
      gate.conditions
        .filter((condition) => condition.status === 'fail')
        .map((condition) => `${gate.name} ${condition.name}: ${condition.detail}`),
    )
    .join('; ');
  if (serverMib.includes(null)) {
    // Without the server's own VRAM for every condition, memory is the file size.
    expect(quant.recommendation!.reason, failedGates).toMatch(/file size 29\.5 MiB vs 87\.2 MiB/);
  } else {
    // A candidate counts as smaller only when it saves at least 1 % of the baseline's VRAM; one that
    // is not smaller may still win by a speed verdict against the baseline, never with a slower one.
    const smaller = quant.conditions.filter((condition) => condition.vram!.server_mib! <= 0.99 * f16!.vram!.server_mib!);
    const verdictsAgainstBaseline = (name: string) =>
      quant.verdicts.filter((row) => row.a === 'f16' && row.b === name && /^(ttft_ms|tpot_ms) /.test(row.metric));
    const fasterOnly = quant.conditions.filter((condition) => {
      const rows = verdictsAgainstBaseline(condition.name);
      return rows.some((row) => row.verdict === 'faster') && !rows.some((row) => row.verdict === 'slower');
    });
    const choice = quant.recommendation!.choice!;
    const allowed = ['f16', ...smaller.map((condition) => condition.name), ...fasterOnly.map((condition) => condition.name)];
    expect(allowed, `${quant.recommendation!.reason} ${failedGates}`).toContain(choice);
    if (choice !== 'f16' && !smaller.some((condition) => condition.name === choice)) {
      expect(quant.recommendation!.reason).toMatch(new RegExp(`better than f16 \\(.*faster`));
    }
  }
}

/**
 * What a warm/cold experiment on prefix-share must show: each condition proven request by
 * request from the server's cached-token counts, and cold-process measuring only the first
 * request of each fresh server, with nothing cached.
 */
export function expectWarmColdProven(warmcold: ExperimentResult, db: string, requestsPerCondition: number, coldStarts: number): void {
  const byName = Object.fromEntries(warmcold.conditions.map((condition) => [condition.name, condition]));
  const cold = byName['cold-cache']!;
  const warm = byName['warm-cache']!;
  const fresh = byName['cold-process']!;
  const all = { measured: requestsPerCondition, confirmed: requestsPerCondition, contradicted: 0, unknown: 0 };
  expect(cold.cache_evidence).toMatchObject({ expect: 'no reuse', ...all });
  // On a shared machine a condition may still be contaminated by competing processes, never by its cache.
  const cacheReasons = /cache was not|cached prompt tokens|fresh server answered/;
  for (const condition of [cold, warm, fresh]) expect(condition.contamination_reason ?? '').not.toMatch(cacheReasons);
  // Every warm request reused ≥ 95 % of its 768-token shared prefix, not just the chat template.
  expect(warm.cache_evidence).toMatchObject({ expect: 'prefix reuse', ...all });
  expect(warm.cache_evidence!.summary).toBe(
    `${requestsPerCondition} of ${requestsPerCondition} requests reused ≥ 95 % of their shared prefix`,
  );
  expect(warm.evidence!.cached_prompt_tokens!).toBeGreaterThan(requestsPerCondition * 700);

  // One measured request per fresh server, the first it ever answered, with nothing cached.
  expect(fresh.run_ids).toHaveLength(coldStarts);
  expect(fresh.requests.attempted).toBe(coldStarts);
  expect(fresh.cold_starts!.starts).toHaveLength(coldStarts);
  for (const start of fresh.cold_starts!.starts) {
    expect(start).toMatchObject({ cached_tokens: 0, requests_before: 0 });
    expect(start.spawn_to_ready_ms).toBeGreaterThan(0);
    expect(start.ttft_ms).toBeGreaterThan(0);
  }
  expect(fresh.cold_starts!.spawn_to_ready_ms.n).toBe(coldStarts);
  expect(fresh.cache_evidence).toMatchObject({ expect: 'no reuse', measured: coldStarts, confirmed: coldStarts, contradicted: 0 });
  const raw = new Database(db, { readonly: true });
  for (const runId of fresh.run_ids) {
    const rows = raw.prepare('SELECT seq, warmup, cached_tokens FROM requests WHERE run_id = ?').all(runId);
    expect(rows).toEqual([{ seq: 0, warmup: 0, cached_tokens: 0 }]);
  }
  raw.close();

  expect(warm.metrics.ttft_ms.p50!).toBeLessThan(cold.metrics.ttft_ms.p50!);
  expect(fresh.metrics.ttft_ms.p50!).toBeGreaterThan(warm.metrics.ttft_ms.p50!);
  const ttftPairs = warmcold.verdicts.filter((row) => row.metric === 'ttft_ms p50').map((row) => `${row.a}→${row.b}`);
  expect(ttftPairs).toEqual(['cold-cache→warm-cache', 'cold-cache→cold-process']);
  expect(warmcold.recommendation!.reason).toMatch(/TTFT p50 against cold-cache/);
}
