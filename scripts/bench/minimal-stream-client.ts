/**
 * The floor a streaming client is measured against: keep-alive connections, events split on
 * blank lines, JSON.parse per event, nothing stored. Closed loop: CONCURRENCY users each send
 * the next request when the last one ends, until REQUESTS have completed. Prints one JSON line.
 *
 *   node --import tsx scripts/bench/minimal-stream-client.ts URL CONCURRENCY REQUESTS
 */
import http from 'node:http';

const [baseUrl, concurrencyArg, requestsArg] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const total = Number(requestsArg);
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
const payload = JSON.stringify({ model: 'load-target', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8, stream: true });

function oneRequest(): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.request(
      `${baseUrl}/v1/chat/completions`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        let buffer = '';
        let done = false;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const data = buffer.slice(6, end);
            buffer = buffer.slice(end + 2);
            if (data === '[DONE]') done = true;
            else JSON.parse(data);
          }
        });
        response.on('end', () => resolve(done));
        response.on('error', () => resolve(false));
      },
    );
    request.on('error', () => resolve(false));
    request.end(payload);
  });
}

let started = 0;
let completed = 0;
let failed = 0;
const t0 = performance.now();
const cpuAtStart = process.cpuUsage();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (started < total) {
      started += 1;
      if (await oneRequest()) completed += 1;
      else failed += 1;
    }
  }),
);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpuAtStart);
process.stdout.write(
  `${JSON.stringify({ completed, failed, wall_ms: wallMs, cpu_ms: (cpu.user + cpu.system) / 1000, requests_per_s: (completed * 1000) / wallMs })}\n`,
);
agent.destroy();
