import http from 'node:http';

/**
 * The smallest streaming client that can report the same number: raw http, line splitting,
 * JSON.parse of the last chunk, a fresh connection per request (llama-server closes it after streaming).
 */
export function minimalRequest(baseUrl: string, headers: Record<string, string>, body: object): Promise<number | null> {
  return new Promise((resolve) => {
    const payload = JSON.stringify({ ...body, stream: true });
    const t0 = performance.now();
    const request = http.request(
      `${baseUrl}/v1/chat/completions`,
      {
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        let buffer = '';
        let timings: { prompt_ms: number; predicted_ms: number } | null = null;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffer += chunk;
          let index;
          while ((index = buffer.indexOf('\n')) >= 0) {
            const line = buffer.slice(0, index);
            buffer = buffer.slice(index + 1);
            if (line.startsWith('data: {') && line.includes('"timings"')) timings = JSON.parse(line.slice(6)).timings;
          }
        });
        response.on('end', () => resolve(timings ? performance.now() - t0 - (timings.prompt_ms + timings.predicted_ms) : null));
      },
    );
    request.on('error', () => resolve(null));
    request.end(payload);
  });
}
