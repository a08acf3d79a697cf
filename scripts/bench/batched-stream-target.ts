/**
 * A load target that decodes like a batching server, without a model: one decode step every
 * STEP_MS writes the next token to every open stream at once, as llama-server's batch does with
 * its slots. Its final chunk carries llama.cpp-style `timings` measured here on the monotonic
 * clock (request received → final chunk written), so `client_overhead_ms` against it holds only
 * what the client and the loopback add: no model, no slot wait, no batch jitter. Each response
 * closes its connection, as llama-server's streamed responses do. Prints its base URL on stdout.
 *
 *   node --import tsx scripts/bench/batched-stream-target.ts TOKENS STEP_MS
 */
import http from 'node:http';

const tokens = Number(process.argv[2] ?? 16);
const stepMs = Number(process.argv[3] ?? 10);

interface OpenStream {
  response: http.ServerResponse;
  tokens: number;
  receivedAt: number;
  firstWrittenAt: number | null;
  sent: number;
}

const open = new Set<OpenStream>();
const event = (payload: object) => `data: ${JSON.stringify(payload)}\n\n`;

function writeNextToken(stream: OpenStream): void {
  stream.sent += 1;
  const now = performance.now();
  stream.firstWrittenAt ??= now;
  const delta = { content: ` t${stream.sent}` };
  if (stream.sent < stream.tokens) {
    stream.response.write(event({ choices: [{ index: 0, delta, finish_reason: null }] }));
    return;
  }
  open.delete(stream);
  // The last token, its finish reason, usage and timings in one chunk, then [DONE], in one write: what
  // a client reads after it is the end of the response only.
  const timings = {
    prompt_n: 16,
    prompt_ms: stream.firstWrittenAt - stream.receivedAt,
    predicted_n: stream.tokens,
    predicted_ms: now - stream.firstWrittenAt,
  };
  stream.response.end(
    event({
      choices: [{ index: 0, delta, finish_reason: 'length' }],
      usage: { prompt_tokens: 16, completion_tokens: stream.tokens, total_tokens: 16 + stream.tokens },
      timings,
    }) + 'data: [DONE]\n\n',
  );
}

setInterval(() => {
  for (const stream of [...open]) writeNextToken(stream);
}, stepMs);

const server = http.createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
    response.writeHead(404).end();
    return;
  }
  const parts: Buffer[] = [];
  request.on('data', (part: Buffer) => parts.push(part));
  request.on('end', () => {
    const receivedAt = performance.now();
    const asked = (JSON.parse(Buffer.concat(parts).toString('utf8')) as { max_tokens?: unknown }).max_tokens;
    const stream: OpenStream = {
      response,
      tokens: typeof asked === 'number' && asked > 0 ? asked : tokens,
      receivedAt,
      firstWrittenAt: null,
      sent: 0,
    };
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'close' });
    response.on('close', () => open.delete(stream));
    open.add(stream);
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
