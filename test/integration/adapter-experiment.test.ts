import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ExperimentResult } from '../../src/shared/contract/experiments';
import { inferlab } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('experiment adapter against the real server', () => {
  it('compares the base model with the demo LoRA adapter, on its own server and swapped per request: its memory, load time, how far it moves the answers, verdicts and a choice', async () => {
    const dir = tempDir();
    const report = path.join(dir, 'adapter.html');
    const db = path.join(dir, 'a.db');
    // Scale 4: the demo adapter's small random weights then move the logits enough for a KLD above zero.
    const result = await inferlab([
      ...['experiment', 'adapter', '--model', 'demo:q8_0', '--adapters', 'demo:lora@4', '--serving', 'both'],
      ...['--repeats', '2', '--requests', '2', '--report', report, '--db', db, '--json'],
    ]);
    expect(result.code, result.stderr).toBe(0);
    const experiment = JSON.parse(result.stdout) as ExperimentResult;
    expect(experiment.kind).toBe('adapter');
    const [base, adapter, swapped] = experiment.conditions;
    expect([base!.name, adapter!.name, swapped!.name]).toEqual(['base', 'demo-lora@4', 'demo-lora@4 swapped']);
    expect(experiment.protocol).toMatchObject({
      model: 'demo:q8_0',
      serving: 'both',
      adapters: [{ name: 'demo-lora@4', file: 'demo:lora', path: expect.stringMatching(/demo-lora\.gguf$/), scale: 4 }],
    });
    expect(base!.lora).toBeNull();
    expect(adapter!.lora).toEqual({ file: 'demo:lora', scale: 4 });
    expect(swapped!.lora).toEqual({ file: 'demo:lora', scale: 4, swapped: true });
    // The server's own LoRA buffer: rank 8 on attn_q and attn_v of every layer, F16.
    expect(base!.lora_mib).toBeNull();
    expect(adapter!.lora_mib).toBeGreaterThan(0);
    for (const condition of [base!, adapter!, swapped!]) {
      expect(condition.run_ids).toHaveLength(2);
      expect(condition.server_load_ms).toBeGreaterThan(0);
    }
    // Swapped: the server loads the adapter at scale 1 and every request asks for it at 4.
    const record = new Database(db, { readonly: true });
    try {
      const run = record.prepare('SELECT server_json, manifest_json FROM runs WHERE id = ?').get(swapped!.run_ids[0]) as {
        server_json: string;
        manifest_json: string;
      };
      const argv: string[] = JSON.parse(run.server_json).effectiveConfig.argv;
      expect(argv.slice(argv.indexOf('--lora'), argv.indexOf('--lora') + 2)).toEqual(['--lora', expect.stringMatching(/demo-lora\.gguf$/)]);
      expect(JSON.parse(run.manifest_json).extra_body).toEqual({ lora: [{ id: 0, scale: 4 }] });
    } finally {
      record.close();
    }
    // Untimed, with the adapter applied in the token pass and in llama-perplexity.
    expect(adapter!.token_agreement?.items).toBeGreaterThan(0);
    expect(adapter!.kld_error).toBeNull();
    expect(adapter!.kld_mean).toBeGreaterThan(0);
    // Each condition against the base model, then the adapter's two servings against each other.
    expect([...new Set(experiment.verdicts.map((row) => `${row.a} → ${row.b}`))]).toEqual([
      'base → demo-lora@4',
      'base → demo-lora@4 swapped',
      'demo-lora@4 → demo-lora@4 swapped',
    ]);
    expect(experiment.recommendation.objective).toBe('lowest TPOT p50 among the adapters that pass every gate, then TTFT p50');
    expect(experiment.recommendation.gates?.[0]?.name).toBe('acceptance');
    expect(experiment.recommendation.gates?.map((gate) => gate.name)).not.toContain('token agreement');
    const html = fs.readFileSync(report, 'utf8');
    expect(html).toContain('<h1>LoRA adapters</h1>');
    expect(html).toMatch(/<h2>Adapters<\/h2>[\s\S]*demo-lora@4/);

    // Mistakes are named before any server starts: no adapter, a model file given as one, a scale out of range.
    const none = await inferlab(['experiment', 'adapter', '--model', 'demo:q8_0', '--db', db]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/experiment adapter needs --adapters FILE\[@SCALE\]/);
    const model = await inferlab(['experiment', 'adapter', '--model', 'demo:q8_0', '--adapters', 'demo:q4_k_m', '--db', db]);
    expect(model.code).toBe(2);
    expect(model.stderr).toMatch(/loraAdapter .*demo-q4_k_m\.gguf: not a LoRA adapter/);
    const scale = await inferlab(['experiment', 'adapter', '--model', 'demo:q8_0', '--adapters', 'demo:lora@9', '--db', db]);
    expect(scale.stderr).toMatch(/adapters: adapter demo:lora: scale must be a number from -4 to 4, got 9/);
    expect(fs.readdirSync(dir).filter((file) => file.endsWith('.html'))).toEqual(['adapter.html']);
  });
});
