/**
 * A load target, not a model: an OpenAI-style streaming endpoint that answers every chat request
 * with a fixed number of tokens at a fixed interval. It runs in a process of its own so that the
 * clients measured against it do not share its event loop. Prints its base URL on stdout.
 *
 *   node --import tsx scripts/bench/sse-load-target.ts TOKENS INTERVAL_MS
 */
import http from 'node:http';

const tokens = Number(process.argv[2] ?? 8);
const intervalMs = Number(process.argv[3] ?? 250);

function event(payload: object): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

const server = http.createServer((request, response) => {
  if (request.method === 'GET' && request.url === '/v1/models') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ object: 'list', data: [{ id: 'load-target', object: 'model' }] }));
    return;
  }
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    response.writeHead(404).end();
    return;
  }
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let sent = 0;
    const timer = setInterval(() => {
      sent += 1;
      if (sent < tokens) {
        response.write(event({ choices: [{ index: 0, delta: { content: ` t${sent}` }, finish_reason: null }] }));
        return;
      }
      clearInterval(timer);
      response.end(
        event({
          choices: [{ index: 0, delta: { content: ` t${sent}` }, finish_reason: 'length' }],
          usage: { prompt_tokens: 16, completion_tokens: tokens, total_tokens: 16 + tokens },
        }) + 'data: [DONE]\n\n',
      );
    }, intervalMs);
    response.on('close', () => clearInterval(timer));
  });
});
server.keepAliveTimeout = 60_000;
server.maxConnections = 100_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
