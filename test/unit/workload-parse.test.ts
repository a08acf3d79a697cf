import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listBuiltinWorkloads, parseWorkloadText, readWorkloadFile, workloadPath } from '../../src/main/workload/parse-workload';
import { resolveWorkload } from '../../src/main/workload/resolve-workload';
import { estimatingTokenCounter } from '../../src/main/workload/token-counter';
import { workloadServes } from '../../src/main/workload/workload-serves';
import { requestFor } from '../../src/main/runner/request-plan';
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

const TOOL =
  '{ type: function, function: { name: get_weather, parameters: { type: object, required: [city], properties: { city: { type: string } } } } }';
const TOOLS = `${VALID}        tools: [${TOOL}]
`;

const EMBEDDINGS = `name: e
groups:
  - name: g
    items:
      - id: a
        input: hello
`;

const RERANK = `name: r
groups:
  - name: g
    items:
      - id: a
        query: which?
        documents: [a, b]
`;

describe('workload parser', () => {
  it('accepts every built-in workload', async () => {
    expect(listBuiltinWorkloads()).toEqual([
      'chat-short',
      'decode-heavy',
      'embeddings',
      'extraction-json',
      'long-context',
      'multi-turn-chat',
      'prefill-heavy',
      'prefix-share',
      'rerank',
      'tool-calls',
      'trace-sample',
      'vision',
    ]);
    for (const name of listBuiltinWorkloads()) expect((await readWorkloadFile(await workloadPath(name))).name).toBe(name);
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
      /groups\[0\]\.items\[0\]: must have exactly one of "messages", "prompt", "turns", "input" or "query"/,
    ],
    [
      'a reference history with a turn that has no reference',
      'name: c\ngroups:\n  - name: g\n    session: { history: reference }\n    items:\n      - id: a\n        turns:\n          - { user: hi, reference: hello }\n          - { user: and then? }\n',
      /w\.yaml:9:13: groups\[0\]\.items\[0\]\.turns\[1\]: the session history is "reference": every turn needs its "reference" answer/,
    ],
    [
      'a session on a group without conversations',
      VALID.replace('  - name: g\n', '  - name: g\n    session: { think_time: { fixed_ms: 10 } }\n'),
      /groups\[0\]\.session: session applies to conversations/,
    ],
    [
      'a uniform think time whose ends are swapped',
      'name: c\ngroups:\n  - name: g\n    session: { think_time: { uniform_ms: [900, 100] } }\n    items:\n      - id: a\n        turns: [{ user: hi }]\n',
      /session\.think_time\.uniform_ms: the low end \(900\) is above the high end \(100\)/,
    ],
    [
      'a system message outside a conversation',
      VALID.replace('id: a', 'id: a\n        system: be brief'),
      /groups\[0\]\.items\[0\]\.system: system is for conversations/,
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
    [
      'an empty embeddings input list',
      EMBEDDINGS.replace('input: hello', 'input: []'),
      /groups\[0\]\.items\[0\]\.input: must NOT have fewer than 1 items/,
    ],
    [
      'an empty embeddings input',
      EMBEDDINGS.replace('input: hello', 'input: ""'),
      /groups\[0\]\.items\[0\]\.input: must NOT have fewer than 1 characters/,
    ],
    [
      'an embeddings input that is not text',
      EMBEDDINGS.replace('input: hello', 'input: [hi, [nested]]'),
      /groups\[0\]\.items\[0\]\.input\/1: must be string|input\[1\]: must be string/,
    ],
    [
      'a check on an embeddings item',
      `${EMBEDDINGS}        accept: [{ contains: x }]\n`,
      /groups\[0\]\.items\[0\]\.accept: accept does not apply to an embeddings request/,
    ],
    [
      'max_tokens on an embeddings item',
      EMBEDDINGS.replace('input: hello', 'input: hello\n        max_tokens: 8'),
      /items\[0\]\.max_tokens: max_tokens does not apply to an embeddings request/,
    ],
    [
      'a chat item beside embeddings',
      `${EMBEDDINGS}      - id: b\n        messages: [{ role: user, content: hi }]\n`,
      /groups\[0\]\.items\[1\]: a workload with embeddings \(group "g"\) is embeddings only/,
    ],
    [
      'a prompt generator beside embeddings',
      `${EMBEDDINGS}  - name: h\n    generate: { synthetic: { count: 2, input_tokens: 8, output_tokens: 4 } }\n`,
      /groups\[1\]\.generate: a workload with embeddings \(group "g"\) is embeddings only/,
    ],
    [
      'a query without documents',
      RERANK.replace('        documents: [a, b]\n', ''),
      /groups\[0\]\.items\[0\]\.query: a reranking item needs both "query" and "documents"/,
    ],
    [
      'documents on a chat item',
      VALID.replace('id: a', 'id: a\n        documents: [x]'),
      /groups\[0\]\.items\[0\]\.documents: a reranking item needs both "query" and "documents"/,
    ],
    [
      'an embeddings item beside reranking',
      `${RERANK}      - id: b\n        input: hello\n`,
      /groups\[0\]\.items\[1\]: a workload with reranking \(group "g"\) is reranking only: give this item "query" and "documents"/,
    ],
    [
      'a check on a reranking item',
      `${RERANK}        accept: [{ contains: x }]\n`,
      /items\[0\]\.accept: accept does not apply to a reranking request/,
    ],
    [
      'generation defaults in an embeddings workload',
      `defaults: { max_tokens: 8 }\n${EMBEDDINGS}`,
      /defaults: defaults set generation fields/,
    ],
    [
      'an embeddings generator of too many inputs',
      'name: e\ngroups:\n  - name: g\n    generate: { embeddings: { count: 100000, inputs_per_request: 2048, input_tokens: 1000 } }\n',
      /groups\[0\]\.generate: generator of group "g" would produce 100,000 requests and 204,800,000,000 prompt tokens/,
    ],
    [
      'tools on a completion item',
      'name: t\ngroups:\n  - name: g\n    items:\n      - id: a\n        prompt: hi\n        tools: [' + TOOL + ']\n',
      /groups\[0\]\.items\[0\]\.tools: tools need a chat request: give the item "messages" instead of "prompt"/,
    ],
    [
      'tools on a conversation',
      'name: t\ngroups:\n  - name: g\n    items:\n      - id: a\n        turns: [{ user: hi }]\n        tools: [' + TOOL + ']\n',
      /items\[0\]\.tools: tools are for single chat requests; a conversation with function calls is not supported yet/,
    ],
    [
      'tool_choice without tools',
      VALID.replace('id: a', 'id: a\n        tool_choice: required'),
      /items\[0\]\.tool_choice: tool_choice needs "tools"/,
    ],
    [
      'a tool_choice naming an undeclared function',
      `${TOOLS}        tool_choice: { type: function, function: { name: send_mail } }\n`,
      /items\[0\]\.tool_choice\.function\.name: "send_mail" is not one of the item's tools/,
    ],
    [
      'a tool_call check naming an undeclared function',
      `${TOOLS}        accept: [{ tool_call: send_mail }]\n`,
      /items\[0\]\.accept: the tool_call check names "send_mail", which is not one of the item's tools/,
    ],
    [
      'a tool_call check without tools',
      VALID.replace('id: a', 'id: a\n        accept: [{ tool_call: get_weather }]'),
      /items\[0\]\.accept: the tool_call check needs "tools" on the item/,
    ],
    [
      'the same function twice',
      `${VALID}        tools: [${TOOL}, ${TOOL}]\n`,
      /items\[0\]\.tools\[1\]\.function\.name: duplicate function "get_weather"/,
    ],
    [
      'parameters that are not a JSON Schema',
      `${VALID}        tools: [{ type: function, function: { name: f, parameters: { type: 12 } } }]\n`,
      /items\[0\]\.tools\[0\]\.function\.parameters: not a valid JSON Schema/,
    ],
    [
      'tool_results without tools',
      VALID.replace('id: a', 'id: a\n        tool_results: { f: "{}" }'),
      /items\[0\]\.tool_results: tool_results are given back to calls: the item needs "tools"/,
    ],
    [
      'a tool result for an undeclared function',
      `${TOOLS}        tool_results: { send_mail: "{}" }\n`,
      /items\[0\]\.tool_results\.send_mail: "send_mail" is not one of the item's tools/,
    ],
    ['max_steps without tool_results', `${TOOLS}        max_steps: 3\n`, /items\[0\]\.max_steps: max_steps is for agent exchanges/],
    [
      'max_steps of one',
      `${TOOLS}        tool_results: { get_weather: "{}" }\n        max_steps: 1\n`,
      /items\[0\]\.max_steps: must be >= 2/,
    ],
    [
      'a function name with spaces',
      `${VALID}        tools: [{ type: function, function: { name: get weather } }]\n`,
      /tools\[0\]\.function\.name: must match pattern/,
    ],
    [
      'tools in an embeddings workload',
      EMBEDDINGS.replace('input: hello', 'input: hello\n        tools: [' + TOOL + ']'),
      /items\[0\]\.tools: tools does not apply to an embeddings request/,
    ],
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

  it('rejects binary and mis-encoded files', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'bin.yaml'), Buffer.from([0x6e, 0x61, 0x00, 0x01]));
    fs.writeFileSync(path.join(dir, 'latin1.yaml'), Buffer.from('name: caf\xe9\n', 'latin1'));
    await expect(readWorkloadFile(path.join(dir, 'bin.yaml'))).rejects.toThrow(/bin\.yaml: contains NUL bytes/);
    await expect(readWorkloadFile(path.join(dir, 'latin1.yaml'))).rejects.toThrow(/latin1\.yaml: is not valid UTF-8/);
    await expect(readWorkloadFile(path.join(dir, 'absent.yaml'))).rejects.toThrow(/absent\.yaml: workload file not found/);
    await expect(readWorkloadFile(dir)).rejects.toThrow(/workload file is a folder, not a file/);
    await expect(workloadPath('no-such-builtin')).rejects.toThrow(/Built-in: chat-short/);
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

describe('conversations in a workload', () => {
  it('resolves turns, the system message and the group session; single requests keep their revision', async () => {
    const conversation = parseWorkloadText(
      'name: c\ngroups:\n  - name: g\n    session: { history: reference, think_time: { uniform_ms: [100, 300] } }\n    items:\n      - id: a\n        system: be brief\n        turns:\n          - { user: hi, reference: hello }\n          - { user: and then?, reference: done }\n',
      'c.yaml',
    );
    const resolved = await resolveWorkload(conversation, 'c.yaml', estimatingTokenCounter);
    expect(resolved.groups[0]!.items[0]!.conversation).toEqual({
      system: 'be brief',
      turns: [
        { user: 'hi', reference: 'hello' },
        { user: 'and then?', reference: 'done' },
      ],
      history: 'reference',
      think_time: { uniform_ms: [100, 300] },
    });
    // A workload without conversations resolves with no conversation field at all, so its
    // revision hash is the one it had before conversations existed.
    const single = await resolveWorkload(parseWorkloadText(VALID, 'w.yaml'), 'w.yaml', estimatingTokenCounter);
    expect(JSON.stringify(single)).not.toContain('conversation');
  });

  it('resolves tools and tool_choice into the request, marks the workload as calling tools, and leaves other items without them', async () => {
    const text = `${TOOLS}        tool_choice: required\n        accept: [{ tool_call: get_weather }]\n      - id: b\n        messages: [{ role: user, content: hi }]\n`;
    const def = parseWorkloadText(text, 'w.yaml');
    expect(workloadServes(def)).toBe('tool-calls');
    const resolved = await resolveWorkload(def, 'w.yaml', estimatingTokenCounter);
    const [offered, plain] = resolved.groups[0]!.items;
    expect(requestFor(offered!).body).toMatchObject({
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
      tool_choice: 'required',
    });
    expect(plain).not.toHaveProperty('tools');
    expect(requestFor(plain!).body).not.toHaveProperty('tools');
    expect(offered).not.toHaveProperty('agent');
    // An agent exchange: the scripted results, its steps (4 unless it says), the group's think time.
    const agentText = `${TOOLS}        tool_results: { get_weather: '{"t": 1}' }\n`.replace(
      '  - name: g\n',
      '  - name: g\n    session: { think_time: { fixed_ms: 30 } }\n',
    );
    const agent = await resolveWorkload(parseWorkloadText(agentText, 'w.yaml'), 'w.yaml', estimatingTokenCounter);
    expect(agent.groups[0]!.items[0]!.agent).toEqual({
      tool_results: { get_weather: '{"t": 1}' },
      max_steps: 4,
      think_time: { fixed_ms: 30 },
    });
    // An item without tools keeps the revision it had before tools existed.
    const alone = await resolveWorkload(parseWorkloadText(VALID, 'w.yaml'), 'w.yaml', estimatingTokenCounter);
    expect(alone.revision).toBe('4a24047dd4d3f4a6051a249c548063e88e9868bba200cc9f7560c299ca21b886');
  });

  it("sends an item's per-request lora choice as llama-server's lora field, and names a bad one by item and field", async () => {
    const text = `${VALID}        lora: [{ id: 0, scale: 0 }]\n      - id: b\n        messages: [{ role: user, content: hi }]\n`;
    const resolved = await resolveWorkload(parseWorkloadText(text, 'w.yaml'), 'w.yaml', estimatingTokenCounter);
    const [base, plain] = resolved.groups[0]!.items;
    expect(requestFor(base!).body).toMatchObject({ lora: [{ id: 0, scale: 0 }] });
    expect(requestFor(plain!).body).not.toHaveProperty('lora');
    expect(parseError(`${VALID}        lora: [{ id: 0, scale: 9 }]\n`)).toMatch(
      /groups\[0\]\.items\[0\]\.lora\[0\]\.scale.*(<=|at most|maximum) 4/,
    );
    expect(parseError(`${VALID}        lora: [{ id: 0 }]\n`)).toMatch(/lora\[0\].*scale/);
    expect(parseError(`${VALID}        lora: [{ id: 1, scale: 1 }, { id: 1, scale: 0.5 }]\n`)).toMatch(
      /groups\[0\]\.items\[0\]\.lora\[1\]\.id.*adapter 1 is named twice/,
    );
    // An embeddings request has no answer for an adapter to shape here: refused with the other generation fields.
    expect(parseError(`${EMBEDDINGS.trimEnd()}\n        lora: [{ id: 0, scale: 1 }]\n`)).toMatch(/lora/);
  });

  it('resolves embeddings inputs (one text or a list) and the generator, keyed by seed; other workloads keep their revision', async () => {
    const def = parseWorkloadText(
      `${EMBEDDINGS}      - id: b\n        input: [one, two]\n  - name: gen\n    generate: { embeddings: { count: 3, inputs_per_request: 4, input_tokens: 16, seed: 5 } }\n`,
      'e.yaml',
    );
    const resolved = await resolveWorkload(def, 'e.yaml', estimatingTokenCounter);
    const [written, generated] = resolved.groups;
    expect(written!.items.map((item) => item.embedding_inputs)).toEqual([['hello'], ['one', 'two']]);
    expect(written!.items.every((item) => item.messages === null && item.prompt === null)).toBe(true);
    expect(generated!.items).toHaveLength(3);
    for (const item of generated!.items) {
      expect(item.embedding_inputs).toHaveLength(4);
      expect(item.messages).toBeNull();
      expect(item.target_input_tokens).toBe(16);
    }
    // Four different texts per request, and the same ones again from the same seed.
    expect(new Set(generated!.items[0]!.embedding_inputs).size).toBe(4);
    expect((await resolveWorkload(def, 'e.yaml', estimatingTokenCounter)).revision).toBe(resolved.revision);
    const single = await resolveWorkload(parseWorkloadText(VALID, 'w.yaml'), 'w.yaml', estimatingTokenCounter);
    expect(JSON.stringify(single)).not.toContain('embedding_inputs');
    expect(JSON.stringify(single)).not.toContain('rerank');
    const reranking = await resolveWorkload(parseWorkloadText(RERANK, 'r.yaml'), 'r.yaml', estimatingTokenCounter);
    expect(reranking.groups[0]!.items[0]!.rerank).toEqual({ query: 'which?', documents: ['a', 'b'] });
  });

  it('the conversations generator makes count × turns turns with reference answers, the same for the same seed', async () => {
    const def = await readWorkloadFile(await workloadPath('multi-turn-chat'));
    const first = await resolveWorkload(def, 'multi-turn-chat', estimatingTokenCounter);
    const again = await resolveWorkload(def, 'multi-turn-chat', estimatingTokenCounter);
    const items = first.groups[0]!.items;
    expect(items).toHaveLength(8);
    for (const item of items) {
      expect(item.conversation!.turns).toHaveLength(5);
      expect(item.conversation!.history).toBe('actual');
      expect(item.sampling.max_tokens).toBe(32);
      for (const turn of item.conversation!.turns) expect(turn.reference).toEqual(expect.any(String));
    }
    expect(items[0]!.conversation!.turns[1]!.user).toMatch(/^Turn 2\. /);
    expect(again.revision).toBe(first.revision);
  });
});
