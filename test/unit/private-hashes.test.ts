import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { renderRunExport } from '../../src/main/store/export-run';
import { RunStore } from '../../src/main/store/run-store';
import { evaluateAcceptance } from '../../src/main/workload/acceptance';
import { createBareRun, storedRequest } from '../support/stored-request';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** Stores one private request whose output is a short, guessable answer; returns the stored hashes and the database bytes. */
function storePrivate(dir: string): { output: string; prompt: string; bytes: Buffer; exported: string } {
  const file = path.join(dir, 'runs.db');
  const db = openDatabase(file);
  const runs = new RunStore(db);
  const id = createBareRun(runs, { kind: 'workload', private: true });
  runs.addRequests(id, [storedRequest(0, { group: 'g', itemId: 'a', promptText: 'Is it raining?', outputText: 'yes' })], { private: true });
  const row = db.prepare('SELECT prompt_sha256 AS prompt, output_sha256 AS output FROM requests').get() as {
    prompt: string;
    output: string;
  };
  const exported = JSON.stringify(renderRunExport(runs, id));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  const bytes = Buffer.concat(
    fs
      .readdirSync(dir)
      .filter((name) => name.startsWith('runs.db'))
      .map((name) => fs.readFileSync(path.join(dir, name))),
  );
  return { ...row, bytes, exported };
}

describe('private runs', () => {
  it('hash prompts and outputs with a per-database key, so a short output is not found by hashing guesses', () => {
    const one = storePrivate(tempDir());
    const two = storePrivate(tempDir());
    const plain = crypto.createHash('sha256').update('yes').digest('hex');
    expect(one.output).toMatch(/^[0-9a-f]{64}$/);
    expect(one.output).not.toBe(two.output);
    expect(one.prompt).not.toBe(two.prompt);
    for (const stored of [one, two]) {
      expect(stored.bytes.includes(plain)).toBe(false);
      expect(stored.bytes.includes(crypto.createHash('sha256').update('Is it raining?').digest('hex'))).toBe(false);
      expect(stored.exported).not.toContain(plain);
    }
  });

  it('acceptance details never quote the output when it is not JSON', () => {
    const secret = 'MARKER-the-private-answer';
    for (const output of [secret, `{"a": ${secret}}`, `\`\`\`json\n{${secret}\n\`\`\``, `[1, 2, "${secret}`]) {
      const result = evaluateAcceptance([{ json_schema: { type: 'object' } }], output, null);
      expect(result.results[0]!.passed).toBe(false);
      expect(result.results[0]!.detail).toMatch(/^not JSON/);
      expect(result.results[0]!.detail).not.toMatch(/MARKER|private|answer/);
    }
  });
});
