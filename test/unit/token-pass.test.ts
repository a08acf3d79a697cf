import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { collectTokens, generateEvalText, TOKEN_PASS_SEED } from '../../src/main/experiments/token-pass';
import { resolvedItem } from '../support/workload-items';

/** A stand-in for llama-server's /apply-template, /completion and /tokenize that records what it was asked. */
function fakeServer(options: { tokensPerCompletion?: (body: Record<string, unknown>) => number[]; textPerCompletion?: string } = {}) {
  const requests: { route: string; body: Record<string, unknown> }[] = [];
  const server = http.createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => (raw += chunk));
    request.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      requests.push({ route: request.url ?? '', body });
      const reply = (value: unknown) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (request.url === '/apply-template')
        return reply({ prompt: `<user>${(body.messages as { content: string }[]).map((message) => message.content).join('|')}</user>` });
      if (request.url === '/tokenize')
        return reply({
          tokens: String(body.content)
            .split(' ')
            .filter(Boolean)
            .map((_, index) => index),
        });
      if (request.url === '/completion')
        return reply({ content: options.textPerCompletion ?? 'x', tokens: options.tokensPerCompletion?.(body) ?? [1, 2, 3] });
      response.writeHead(404).end();
    });
  });
  return { server, requests };
}

const servers: http.Server[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function listen(server: http.Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const item = resolvedItem;

describe('the untimed token pass', () => {
  it('applies the chat template on the server, then asks /completion for greedy token ids without the prompt cache', async () => {
    const fake = fakeServer({ tokensPerCompletion: (body) => [String(body.prompt).length] });
    const server = { baseUrl: await listen(fake.server), headers: {} };
    const tokens = await collectTokens(server, [
      {
        key: 'g/chat',
        item: item({
          id: 'chat',
          messages: [{ role: 'user', content: 'hi' }],
          sampling: { max_tokens: 24, ignore_eos: true, stop: ['\n'] },
        }),
      },
      { key: 'g/raw', item: item({ id: 'raw', prompt: 'Once', response_format: { type: 'json_object' } }) },
    ]);
    expect([...tokens.entries()]).toEqual([
      ['g/chat', ['<user>hi</user>'.length]],
      ['g/raw', [4]],
    ]);
    expect(fake.requests.map((request) => request.route)).toEqual(['/apply-template', '/completion', '/completion']);
    expect(fake.requests[1]!.body).toEqual({
      prompt: '<user>hi</user>',
      n_predict: 24,
      temperature: 0,
      seed: TOKEN_PASS_SEED,
      return_tokens: true,
      cache_prompt: false,
      stream: false,
      ignore_eos: true,
      stop: ['\n'],
    });
    expect(fake.requests[2]!.body).toMatchObject({ prompt: 'Once', n_predict: 16, json_schema: {} });
  });

  it('refuses a server that returns no token ids', async () => {
    const fake = fakeServer({ tokensPerCompletion: () => 'nope' as unknown as number[] });
    const server = { baseUrl: await listen(fake.server), headers: {} };
    await expect(collectTokens(server, [{ key: 'g/a', item: item({ prompt: 'x' }) }])).rejects.toThrow(/no token ids/);
  });

  it('samples the evaluation text with a fixed seed, ignoring end-of-text, and continues until it tokenizes long enough', async () => {
    const fake = fakeServer({ textPerCompletion: 'w '.repeat(60) });
    const server = { baseUrl: await listen(fake.server), headers: {} };
    const result = await generateEvalText(server, 100, 4096);
    expect(result.text.split(' ').filter(Boolean).length).toBeGreaterThanOrEqual(100);
    const completions = fake.requests.filter((request) => request.route === '/completion');
    expect(completions.length).toBe(2);
    expect(completions[0]!.body).toMatchObject({ temperature: 0.8, seed: 1, ignore_eos: true, cache_prompt: false, stream: false });
    expect(String(completions[1]!.body.prompt)).toContain('w w w');
  });
});
