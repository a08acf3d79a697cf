import type { ServerAddress } from '../core/server-address';

/** Counts tokens the way the serving engine will, so generated prompts hit exact lengths. */
export interface TokenCounter {
  count(text: string): Promise<number>;
  /** False when counts are estimates (an endpoint without a tokenize API). */
  exact: boolean;
}

/** llama-server's POST /tokenize, without special tokens: the content's own length. */
export function llamaServerTokenCounter(server: ServerAddress): TokenCounter {
  return {
    exact: true,
    async count(text) {
      const response = await fetch(`${server.baseUrl}/tokenize`, {
        method: 'POST',
        headers: { ...server.headers, 'content-type': 'application/json' },
        body: JSON.stringify({ content: text, add_special: false }),
        signal: AbortSignal.timeout(30_000),
      });
      if (!response.ok) throw new Error(`/tokenize answered HTTP ${response.status}`);
      const body = (await response.json()) as { tokens?: unknown[] };
      if (!Array.isArray(body.tokens)) throw new Error('/tokenize returned no tokens array');
      return body.tokens.length;
    },
  };
}

/** Roughly 0.75 words per token for English prose; labelled inexact wherever it is used. */
export const estimatingTokenCounter: TokenCounter = {
  exact: false,
  async count(text) {
    const words = text.trim().split(/\s+/).filter(Boolean).length;
    return Math.round(words / 0.75);
  },
};
