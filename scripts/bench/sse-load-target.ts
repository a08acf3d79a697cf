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

/**
 * INTERVAL_MS 0: as many tokens as the request's max_tokens, written in batches of 256 events as
 * fast as the socket takes them, so only the client's reading paces the stream.
 */
function answerAtOnce(request: http.IncomingMessage, response: http.ServerResponse): void {
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', async () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { max_tokens?: number; messages?: { content: string }[] };
    const count = body.max_tokens ?? tokens;
    const promptChars = (body.messages ?? []).reduce((sum, message) => sum + message.content.length, 0);
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (let first = 1; first <= count; first += 256) {
      let batch = '';
      for (let index = first; index < Math.min(first + 256, count + 1); index += 1)
        batch += event({ choices: [{ index: 0, delta: { content: ` t${index}` }, finish_reason: index === count ? 'length' : null }] });
      if (!response.write(batch)) await new Promise((resolve) => response.once('drain', resolve));
    }
    response.end(
      event({ choices: [], usage: { prompt_tokens: Math.round(promptChars / 4), completion_tokens: count, total_tokens: count } }) +
        'data: [DONE]\n\n',
    );
  });
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
  if (intervalMs === 0) {
    answerAtOnce(request, response);
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
