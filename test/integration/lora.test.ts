import fs from 'node:fs';
import path from 'node:path';
import { storedServerConfig } from '../support/stored-server';
import { describe, expect, it } from 'vitest';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { inferlab, inferlabJson } from '../support/cli';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('a LoRA adapter on the real llama-server', () => {
  it('runs a demo model with the demo adapter at a scale the argv records, and refuses a model file given as the adapter before a server starts', async () => {
    const db = path.join(tempDir(), 'l.db');
    const summary = await inferlabJson(
      [
        'run',
        '--workload',
        'chat-short',
        '--model',
        'demo:q8_0',
        '--requests',
        '2',
        '--set',
        'loraAdapter=demo:lora',
        '--set',
        'loraScale=0.5',
      ],
      db,
    );
    expect(summary.status).toBe('completed');
    expect(summary.requests).toMatchObject({ attempted: 2, completed: 2, failed: 0 });
    const { argv } = storedServerConfig(db, summary.run_id);
    expect(argv[argv.indexOf('--lora-scaled') + 1]).toMatch(/\/demo-lora\.gguf:0\.5$/);

    const refused = await inferlab(['run', '--workload', 'chat-short', '--model', 'demo:q8_0', '--set', 'lora=demo:q4_k_m', '--db', db]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/loraAdapter .*demo-q4_k_m\.gguf: not a LoRA adapter \(general\.type null, adapter\.type null\)/);
  });
  it('sends a per-request lora choice on one server with the adapter, reads back what the server loaded, and refuses a choice it will not load', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'l.db');
    const workload = path.join(dir, 'swap.yaml');
    // Two groups on one server: the base model's answers (the adapter at scale 0 for the request) and the adapter's.
    fs.writeFileSync(
      workload,
      [
        'name: swap',
        'defaults: { max_tokens: 8, temperature: 0 }',
        'groups:',
        '  - name: base',
        '    items: [{ id: base, messages: [{ role: user, content: Say hi. }], lora: [{ id: 0, scale: 0 }] }]',
        '  - name: tuned',
        '    items: [{ id: tuned, messages: [{ role: user, content: Say hi. }], lora: [{ id: 0, scale: 1 }] }]',
        '',
      ].join('\n'),
    );
    const summary = await inferlabJson(
      ['run', '--workload', workload, '--model', 'demo:q8_0', '--requests', '4', '--set', 'loraAdapter=demo:lora'],
      db,
    );
    expect(summary.requests).toMatchObject({ attempted: 4, completed: 4, failed: 0 });
    expect(storedServerConfig(db, summary.run_id).loraAdapters).toEqual([
      { id: 0, path: expect.stringMatching(/demo-lora\.gguf$/), scale: 1 },
    ]);
    const refused = await inferlab(['run', '--workload', workload, '--model', 'demo:q8_0', '--requests', '1', '--db', db]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/workload item "base": lora names adapter 0, but the server loads none: set the profile's loraAdapter/);
  });

  it('loads several adapters on one server, in order, each request picking its own; an id past them and one named twice are refused', async () => {
    const dir = tempDir();
    const db = path.join(dir, 'multi.db');
    // A second adapter file: the demo one copied under another name (constructed).
    const second = path.join(dir, 'second-lora.gguf');
    fs.copyFileSync(await resolveModelRef('demo:lora'), second);
    const workload = path.join(dir, 'pick.yaml');
    const item = (id: string, lora: string) => `    items: [{ id: ${id}, messages: [{ role: user, content: Say hi. }], lora: ${lora} }]`;
    fs.writeFileSync(
      workload,
      [
        'name: pick',
        'defaults: { max_tokens: 4, temperature: 0 }',
        'groups:',
        '  - name: first',
        item('first', '[{ id: 0, scale: 1 }, { id: 1, scale: 0 }]'),
        '  - name: second',
        item('second', '[{ id: 0, scale: 0 }, { id: 1, scale: 1 }]'),
        '',
      ].join('\n'),
    );
    const adapters = `loraAdapter=demo:lora,${second}@0.5`;
    const summary = await inferlabJson(['run', '--workload', workload, '--model', 'demo:q8_0', '--requests', '4', '--set', adapters], db);
    expect(summary.requests).toMatchObject({ attempted: 4, completed: 4, failed: 0 });
    const server = storedServerConfig(db, summary.run_id);
    expect(server.argv.slice(server.argv.indexOf('--lora'), server.argv.indexOf('--lora') + 4)).toEqual([
      '--lora',
      expect.stringMatching(/demo-lora\.gguf$/),
      '--lora-scaled',
      `${second}:0.5`,
    ]);
    expect(server.loraAdapters).toEqual([
      { id: 0, path: expect.stringMatching(/demo-lora\.gguf$/), scale: 1 },
      { id: 1, path: second, scale: 0.5 },
    ]);
    fs.writeFileSync(workload, fs.readFileSync(workload, 'utf8').replace('{ id: 1, scale: 1 }', '{ id: 2, scale: 1 }'));
    const past = await inferlab(['run', '--workload', workload, '--model', 'demo:q8_0', '--requests', '1', '--set', adapters, '--db', db]);
    expect(past.code).toBe(2);
    expect(past.stderr).toMatch(
      /workload item "second": lora names adapter 2, but the server loads 2 \(ids 0 to 1, in the order of the profile's loraAdapter list\)/,
    );
    fs.writeFileSync(workload, fs.readFileSync(workload, 'utf8').replace('{ id: 2, scale: 1 }', '{ id: 1, scale: 1 }'));
    const twice = await inferlab([
      'run',
      '--workload',
      workload,
      '--model',
      'demo:q8_0',
      '--set',
      `loraAdapter=${second},${second}`,
      '--db',
      db,
    ]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/loraAdapter: .*second-lora\.gguf is named twice: give each adapter once \(its id is its place\)/);
  });
});
