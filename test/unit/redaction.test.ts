import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { ServerSessionStore } from '../../src/main/store/server-sessions';
import { openDatabase } from '../../src/main/store/database';
import { renderRunExport } from '../../src/main/store/export-run';
import { RunStore } from '../../src/main/store/run-store';
import { effectiveConfig } from '../support/effective-config';
import { createBareRun, requestMetrics, storedRequest } from '../support/stored-request';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

const SECRETS = ['sk-flag-SECRET-1', 'hf_TOKEN_SECRET_2', 'inline-SECRET-3', 'query-SECRET-4', 'pass-SECRET-5', 'short-SECRET-6'];

/** Every file under `dir`, byte-wise: the database, its WAL, the export. */
function filesContaining(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (folder: string) => {
    for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (fs.readFileSync(full).includes(Buffer.from(needle))) hits.push(full);
    }
  };
  walk(dir);
  return hits;
}

describe('secrets never reach stored records or exports', () => {
  it('redacts secret flags in argv, profiles and effective configs, and credentials in endpoint URLs', () => {
    const dir = tempDir();
    const db = openDatabase(path.join(dir, 'data', 'runs.db'));
    const extraFlags = [
      '--api-key',
      SECRETS[0]!,
      '--hf-token',
      SECRETS[1]!,
      '--api-key=' + SECRETS[2]!,
      '-hft',
      SECRETS[5]!,
      '--temp',
      '0.5',
    ];
    const profile = { ...defaultProfile('keyed'), extraFlags };
    const argv = ['/opt/llama-server', '--port', '8080', '-m', '/models/x.gguf', ...extraFlags];
    const sessions = new ServerSessionStore(db);
    sessions.recordStart({
      id: 's1',
      engine: 'llama.cpp',
      binary: '/opt/llama-server',
      argv: argv.slice(1),
      modelRef: 'x',
      modelPath: '/models/x.gguf',
      profile,
      pid: null,
      port: 8080,
    });
    const effective = effectiveConfig({ model: 'x', argv });
    sessions.recordReady('s1', { loadMs: 1 } as never, effective);

    const endpoint = `https://user:${SECRETS[4]}@api.example.com/v1?key=${SECRETS[3]}&model=m`;
    const runs = new RunStore(db);
    const id = createBareRun(runs, {
      kind: 'workload',
      engine: { origin: 'endpoint', url: endpoint, model: 'm' },
      server: { sessionId: 's1', effectiveConfig: effective },
      manifest: { target: { kind: 'endpoint', url: endpoint }, metricsUrl: `${endpoint}/metrics`, argv },
    });
    runs.finishRun(id, 'failed', `Cannot reach the endpoint ${endpoint}: refused`, null);
    const exported = path.join(dir, 'export');
    const rendered = renderRunExport(runs, id);
    fs.mkdirSync(exported, { recursive: true });
    for (const [name, content] of [
      ['manifest.json', rendered.manifest],
      ['summary.json', rendered.summary],
      ['requests.jsonl', rendered.requestsJsonl],
      ['requests.csv', rendered.requestsCsv],
      ['telemetry.json', rendered.telemetry],
    ] as const)
      fs.writeFileSync(path.join(exported, name), content);
    db.close();

    for (const secret of SECRETS) expect(filesContaining(dir, secret), secret).toEqual([]);
    // What is not secret survives, so the record still says what ran.
    const manifest = fs.readFileSync(path.join(exported, 'manifest.json'), 'utf8');
    expect(manifest).toContain('api.example.com/v1');
    expect(manifest).toContain('model=m');
    expect(manifest).toContain('--api-key');
    expect(manifest).toContain('0.5');
  });
});

describe('CSV export', () => {
  it('escapes cells a spreadsheet would run as formulas; numbers, negative ones included, stay numbers', () => {
    const db = openDatabase(path.join(tempDir(), 'runs.db'));
    const runs = new RunStore(db);
    const id = createBareRun(runs, { kind: 'workload' });
    const metrics = requestMetrics({ ttft_ms: -3.5 });
    const hostile = ['=HYPERLINK("http://evil")', '+1+cmd', '-2+3', '@SUM(A1)', '\t=1', '\r=1'];
    runs.addRequests(
      id,
      hostile.map((text, seq) => storedRequest(seq, { group: text, itemId: text, metrics })),
    );
    const csv = renderRunExport(runs, id).requestsCsv;
    db.close();
    const [header, ...rows] = csv.trim().split('\n');
    const ttftColumn = header!.split(',').indexOf('ttft_ms');
    expect(rows).toHaveLength(hostile.length);
    for (const row of rows) {
      const cells = row.split(',');
      // group and item_id: text, never starting (inside optional quotes) with a formula character.
      for (const cell of cells.slice(3, 5)) expect(cell.replace(/^"/, '')).not.toMatch(/^[=+\-@\t\r]/);
      // ttft_ms: a negative number, written as a number.
      expect(cells[ttftColumn]).toBe('-3.5');
    }
    expect(csv).toContain(`'=HYPERLINK`);
  });
});
