import http from 'node:http';
import { afterEach } from 'vitest';

/**
 * Byte streams shaped like llama-server's /v1/chat/completions, written by a real local HTTP
 * server with real pauses, read by the real stream client: only the engine is stood in for.
 * Every server a test file starts is closed after each test.
 */
export type Step = { after: number; data: unknown };

export const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
export const role = chunk({ role: 'assistant', content: null });
export const say = (content: string) => chunk({ content });
export const think = (reasoning_content: string) => chunk({ reasoning_content });
export const finish = (reason = 'stop') => chunk({}, reason);
export const usage = (prompt: number, completion: number, timings?: Record<string, number>) => ({
  object: 'chat.completion.chunk',
  choices: [],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  ...(timings ? { timings } : {}),
});
export const DONE = '[DONE]';

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** Serves `script` on every chat request (each step `after` ms after the previous) and a word-counting /tokenize. */
export async function sseServer(script: Step[] | ((body: Record<string, unknown>) => Step[])): Promise<string> {
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (piece: Buffer) => (body += piece.toString()));
    request.on('end', () => {
      if (request.url === '/tokenize') {
        const { content } = JSON.parse(body) as { content: string };
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            tokens: content
              .split(/\s+/)
              .filter(Boolean)
              .map((_, i) => i),
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const steps = typeof script === 'function' ? script(JSON.parse(body) as Record<string, unknown>) : script;
      let index = 0;
      const next = () => {
        const step = steps[index++];
        if (!step) return void response.end();
        setTimeout(() => {
          response.write(`data: ${typeof step.data === 'string' ? step.data : JSON.stringify(step.data)}\n\n`);
          next();
        }, step.after);
      };
      next();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}
