import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listBuiltinWorkloads, parseWorkloadText, readWorkloadFile, workloadPath } from '../../src/main/workload/parse-workload';
import { resolveWorkload } from '../../src/main/workload/resolve-workload';
import { estimatingTokenCounter } from '../../src/main/workload/token-counter';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

function parseError(text: string): string {
  try {
    parseWorkloadText(text, 'w.yaml');
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the workload to be rejected');
}

const VALID = `name: ok
groups:
  - name: g
    items:
      - id: a
        messages: [{ role: user, content: hi }]
`;

describe('workload parser', () => {
  it('accepts every built-in workload', () => {
    expect(listBuiltinWorkloads()).toEqual([
      'chat-short',
      'decode-heavy',
      'extraction-json',
      'long-context',
      'prefill-heavy',
      'prefix-share',
    ]);
    for (const name of listBuiltinWorkloads()) expect(readWorkloadFile(workloadPath(name)).name).toBe(name);
  });

  it.each([
    ['malformed YAML', 'name: x\ngroups: [\n  - {', /w\.yaml:\d+:\d+: /],
    ['an empty file', '   \n', /the file is empty/],
    ['a top-level list', '- name: x\n', /w\.yaml:1:1: expected a mapping/],
    ['an unknown field', `${VALID}        colour: blue\n`, /w\.yaml:7:9: groups\[0\]\.items\[0\]\.colour: unknown field "colour"/],
    [
      'a wrong type',
      VALID.replace('id: a', 'id: a\n        max_tokens: "many"'),
      /w\.yaml:6:9: groups\[0\]\.items\[0\]\.max_tokens: must be integer/,
    ],
    ['a missing field', 'name: x\n', /missing required field "groups"/],
    [
      'both prompt and messages',
      VALID.replace('id: a', 'id: a\n        prompt: p'),
      /groups\[0\]\.items\[0\]: must have exactly one of "messages" or "prompt"/,
    ],
    [
      'a bad regex',
      `${VALID}        accept: [{ regex: "(unclosed" }]\n`,
      /groups\[0\]\.items\[0\]\.accept\[0\]\.regex: not a valid regular expression/,
    ],
    [
      'an invalid JSON schema',
      `${VALID}        accept: [{ json_schema: { type: 12 } }]\n`,
      /accept\[0\]\.json_schema: not a valid JSON Schema/,
    ],
    ['a duplicate item id', VALID + '      - id: a\n        prompt: again\n', /groups\[0\]\.items\[1\]\.id: duplicate item id "a"/],
    ['a duplicate key', 'name: a\nname: b\ngroups: []\n', /w\.yaml:2:1: .*[Mm]ap keys must be unique/],
  ])('rejects %s, naming the file and the line or field', (_name, text, message) => {
    expect(parseError(text)).toMatch(message);
  });

  it('refuses a YAML alias bomb instead of expanding it', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...'bcdefghi'.split('').map((key, i) => `${key}: &${key} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
      'name: x',
      'groups: []',
    ].join('\n');
    const started = Date.now();
    expect(parseError(bomb)).toMatch(/alias/i);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('rejects binary and mis-encoded files', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'bin.yaml'), Buffer.from([0x6e, 0x61, 0x00, 0x01]));
    fs.writeFileSync(path.join(dir, 'latin1.yaml'), Buffer.from('name: caf\xe9\n', 'latin1'));
    expect(() => readWorkloadFile(path.join(dir, 'bin.yaml'))).toThrow(/bin\.yaml: contains NUL bytes/);
    expect(() => readWorkloadFile(path.join(dir, 'latin1.yaml'))).toThrow(/latin1\.yaml: is not valid UTF-8/);
    expect(() => readWorkloadFile(path.join(dir, 'absent.yaml'))).toThrow(/Workload file not found/);
    expect(() => workloadPath('no-such-builtin')).toThrow(/Built-in: chat-short/);
  });

  it('gives the same revision for the same content whatever the key order, and another for other content', async () => {
    const a = await resolveWorkload(parseWorkloadText(VALID, 'a.yaml'), 'a.yaml', estimatingTokenCounter);
    const reordered = 'groups:\n  - items:\n      - messages: [{ content: hi, role: user }]\n        id: a\n    name: g\nname: ok\n';
    const b = await resolveWorkload(parseWorkloadText(reordered, 'b.yaml'), 'b.yaml', estimatingTokenCounter);
    const c = await resolveWorkload(
      parseWorkloadText(VALID.replace('content: hi', 'content: hello'), 'c.yaml'),
      'c.yaml',
      estimatingTokenCounter,
    );
    expect(a.revision).toBe(b.revision);
    expect(a.revision).not.toBe(c.revision);
    expect(a.groups[0]!.items[0]!.sampling.max_tokens).toBe(128);
  });

  it('imports ShareGPT conversations and names the file on bad ones', async () => {
    const dir = tempDir();
    fs.writeFileSync(
      path.join(dir, 'sg.json'),
      JSON.stringify([
        {
          conversations: [
            { from: 'human', value: 'Q1' },
            { from: 'gpt', value: 'A1' },
            { from: 'human', value: 'Q2' },
            { from: 'gpt', value: 'A2' },
          ],
        },
        { conversations: [{ from: 'gpt', value: 'orphan answer' }] },
      ]),
    );
    fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify([{ conversations: [{ from: 'robot', value: 'x' }] }]));
    const def = parseWorkloadText(
      'name: sg\ngroups:\n  - name: imported\n    generate: { sharegpt: { file: sg.json, max_tokens: 20 } }\n',
      path.join(dir, 'w.yaml'),
    );
    const resolved = await resolveWorkload(def, path.join(dir, 'w.yaml'), estimatingTokenCounter);
    expect(resolved.groups[0]!.items.map((item) => item.messages)).toEqual([
      [
        { role: 'user', content: 'Q1' },
        { role: 'assistant', content: 'A1' },
        { role: 'user', content: 'Q2' },
      ],
    ]);
    const bad = parseWorkloadText(
      'name: sg\ngroups:\n  - name: imported\n    generate: { sharegpt: { file: bad.json } }\n',
      path.join(dir, 'w.yaml'),
    );
    await expect(resolveWorkload(bad, path.join(dir, 'w.yaml'), estimatingTokenCounter)).rejects.toThrow(
      /bad\.json: entry 0 turn 0 has unknown speaker "robot"/,
    );
  });
});
