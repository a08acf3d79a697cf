import crypto from 'node:crypto';
import type { ServerAddress } from '../core/server-address';
import type { EngineInfo } from '../../shared/contract/engine';

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

/** How many counts this process keeps: each is a digest and a number, a few megabytes at most. */
export const REMEMBERED_COUNTS_MAX = 50_000;
const rememberedCounts = new Map<string, number>();

/**
 * A counter that asks `counter` once per text and tokenizer. `tokenizer` must name everything
 * a count depends on (engine build, model file's hash, server flags): every window of an
 * experiment resolves the same workload again, often on a fresh server of the same model,
 * and a generated workload takes hundreds of /tokenize round trips to resolve.
 */
export function rememberingTokenCounter(counter: TokenCounter, tokenizer: string): TokenCounter {
  return {
    exact: counter.exact,
    async count(text) {
      const key = crypto.createHash('sha256').update(`${tokenizer.length}:${tokenizer}`).update(text).digest('base64');
      const known = rememberedCounts.get(key);
      if (known !== undefined) return known;
      const counted = await counter.count(text);
      // The oldest goes first: a workload's texts are asked for together, so they leave together.
      if (rememberedCounts.size >= REMEMBERED_COUNTS_MAX) rememberedCounts.delete(rememberedCounts.keys().next().value!);
      rememberedCounts.set(key, counted);
      return counted;
    },
  };
}

/**
 * What a managed llama-server's token counts depend on: the engine build that tokenizes, the
 * model file whose vocabulary it uses (by hash, so a file replaced in place is another), and
 * the flags it was launched with (one may override the tokenizer's metadata).
 */
export function tokenizerIdentity(tokenizer: {
  engine: Pick<EngineInfo, 'serverPath' | 'version' | 'commit'>;
  modelSha256: string;
  extraFlags: readonly string[];
}): string {
  const { engine, modelSha256, extraFlags } = tokenizer;
  return JSON.stringify([engine.serverPath, engine.version, engine.commit, modelSha256, extraFlags]);
}
