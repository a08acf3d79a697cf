import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { inferlab, inferlabJson } from '../support/cli';
import { useTempDirs } from '../support/temp';
import { storedServerConfig } from '../support/stored-server';

const tempDir = useTempDirs();

describe('embeddings and reranking on the real llama-server', () => {
  it('runs the built-in embeddings workload on a demo model: a server started for vectors, every request a success, inputs/s and latency', async () => {
    const db = path.join(tempDir(), 'e.db');
    // One pass over the workload: 2 written items (1 and 3 texts), then 4 requests each of 1, 4 and 16 texts.
    const summary = await inferlabJson(
      ['run', '--workload', 'embeddings', '--model', 'demo:q8_0', '--requests', '14', '--concurrency', '2'],
      db,
    );
    expect(summary.status).toBe('completed');
    expect(summary.requests).toMatchObject({ attempted: 14, completed: 14, failed: 0 });
    expect(summary.embeddings).toMatchObject({ requests: 14, inputs: 1 + 3 + 4 * (1 + 4 + 16) });
    expect(summary.embeddings.inputs_per_s).toBeGreaterThan(0);
    // The server counted every text's tokens: 84 generated texts of 64 tokens each, and the written ones.
    expect(summary.embeddings.input_tokens).toBeGreaterThan(84 * 64);
    expect(summary.embeddings.input_tokens_per_s).toBeGreaterThan(summary.embeddings.inputs_per_s);
    // Latency per request is E2E; nothing streams, so there is no TTFT and no output.
    expect(summary.metrics.e2e_ms.n).toBe(14);
    expect(summary.metrics.e2e_ms.p50).toBeGreaterThan(0);
    expect(summary.metrics.ttft_ms.n).toBe(0);
    expect(summary.throughput.output_tokens_total).toBe(0);

    // The demo model declares no pooling: the server was started with --embeddings and mean pooling.
    const record = new Database(db, { readonly: true });
    try {
      const server = JSON.parse(
        (record.prepare('SELECT server_json FROM runs WHERE id = ?').get(summary.run_id) as { server_json: string }).server_json,
      );
      const argv: string[] = server.effectiveConfig.argv;
      expect(argv).toContain('--embeddings');
      expect(argv.slice(argv.indexOf('--pooling'), argv.indexOf('--pooling') + 2)).toEqual(['--pooling', 'mean']);
      const texts = record
        .prepare('SELECT prompt_text FROM requests WHERE run_id = ? AND item_id = ?')
        .all(summary.run_id, 'three-sentences') as {
        prompt_text: string;
      }[];
      expect(JSON.parse(texts[0]!.prompt_text)).toHaveLength(3);
    } finally {
      record.close();
    }

    const shown = await inferlab(['runs', 'show', summary.run_id, '--db', db]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(
      /^embeddings: 88 inputs in 14 requests \(6\.3 per request\), [\d.]+ inputs\/s, [\d.]+ input tok\/s; latency per request is E2E$/m,
    );
  });

  it('refuses the rerank workload on a model without a ranking head, naming what is missing, before its server starts', async () => {
    const dir = tempDir();
    const result = await inferlab(['run', '--workload', 'rerank', '--model', 'demo:q8_0', '--db', path.join(dir, 'r.db')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /demo-q8_0\.gguf has no ranking head \(no rank pooling in its header, no cls tensors\): reranking needs a reranker model/,
    );
    expect(result.stderr).not.toMatch(/starting llama-server/);
  });

  it('refuses an embeddings workload that also asks for answers, naming the item, before any server starts', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'mixed.yaml');
    fs.writeFileSync(
      file,
      'name: mixed\ngroups:\n  - name: g\n    items:\n      - id: vec\n        input: hello\n      - id: chat\n        messages: [{ role: user, content: hi }]\n',
    );
    const result = await inferlab(['run', '--workload', file, '--model', 'demo:q8_0', '--requests', '2', '--db', path.join(dir, 'm.db')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /mixed\.yaml:7:\d+: groups\[0\]\.items\[1\]: a workload with embeddings \(group "g"\) is embeddings only/,
    );
    expect(result.stderr).not.toMatch(/starting llama-server/);
  });

  it('sweeps the batch, texts per request, on one server setting: latency per request and inputs/s, judged, in the tables and the report', async () => {
    const dir = tempDir();
    const db = path.join(dir, 's.db');
    const report = path.join(dir, 'batch.html');
    // The terminal's table first, then the stored result it came from.
    const printed = await inferlab([
      ...['experiment', 'sweep', '--model', 'demo:q8_0', '--vary', 'inputs_per_request=1,8', '--repeats', '3'],
      // 21 requests a condition: enough for a pooled p95, which the Pareto set needs.
      ...['--requests', '7', '--report', report, '--db', db],
    ]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/^condition +windows +requests +E2E p50 +E2E p95 +inputs\/s +goodput/m);
    expect(printed.stdout).not.toMatch(/TTFT|TPOT/);
    const record = new Database(db, { readonly: true });
    const sweep = JSON.parse((record.prepare('SELECT result_json FROM experiments').get() as { result_json: string }).result_json);
    record.close();
    expect(sweep.protocol).toMatchObject({ workload: 'embeddings', vary: { field: 'inputs_per_request', values: ['1', '8'] } });
    expect(sweep.conditions.map((condition: { name: string }) => condition.name)).toEqual([
      'inputs_per_request=1 @ c=1',
      'inputs_per_request=8 @ c=1',
    ]);
    for (const [index, batch] of [1, 8].entries()) {
      const condition = sweep.conditions[index];
      // Only the generated batches ran, each at the value: the written items' texts would blur it.
      expect(condition.embeddings.inputs_per_request_mean).toBe(batch);
      expect(condition.embeddings.window_inputs_per_s).toHaveLength(3);
      expect(condition.embeddings.inputs_per_s).toBeGreaterThan(0);
      expect(condition.metrics.e2e_ms.n).toBe(21);
      expect(condition.metrics.ttft_ms.n).toBe(0);
      // Every window's server was started for vectors, with the experiment's own setting.
      for (const runId of condition.run_ids) expect(storedServerConfig(db, runId).argv).toContain('--embeddings');
    }
    // Eight texts a request take longer than one; whether they go through faster per text is the finding.
    expect(sweep.verdicts.map((row: { metric: string }) => row.metric)).toEqual([
      'e2e_ms p50',
      'e2e_ms p95',
      'embedding_inputs_per_s mean',
    ]);
    // Withheld only where other processes competed with a condition (two cores, CI's other work), and then it says so.
    const [latency] = sweep.verdicts;
    if (latency.verdict === 'insufficient data') expect(latency.note).toMatch(/^no verdict: .* is contaminated/);
    else expect(latency.verdict).toBe('slower');
    expect(sweep.recommendation.reason).toMatch(/the Pareto set of inputs\/s against latency \(E2E\) p95 is inputs_per_request=/);

    const html = fs.readFileSync(report, 'utf8');
    expect(html).toMatch(/<th>E2E p50 \(ms\)<\/th><th>E2E p95 \(ms\)<\/th><th>Inputs\/s<\/th>/);
    expect(html).toContain('Inputs/s against latency (E2E) p95');
  });

  it('refuses to sweep the batch of a workload that sends no generated embeddings, and an experiment that would compare answers on vectors', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'r.db');
    const sweep = ['experiment', 'sweep', '--model', 'demo:q8_0', '--vary', 'inputs_per_request=1,4'];
    const batch = await inferlab([...sweep, '--workload', 'chat-short', '--db', db]);
    expect(batch.code).toBe(2);
    expect(batch.stderr).toMatch(/vary inputs_per_request needs a workload that generates embeddings requests .*chat-short has none/);
    const quantizations = ['experiment', 'quant', '--model', 'demo:f16', '--quants', 'f16,q8_0'];
    const quant = await inferlab([...quantizations, '--workload', 'embeddings', '--db', db]);
    expect(quant.code).toBe(2);
    expect(quant.stderr).toMatch(/is an embeddings workload: this experiment compares generated answers; .*sweep its batch/);
    for (const result of [batch, quant]) expect(result.stderr).not.toMatch(/starting llama-server/);
  });
});
