import crypto from 'node:crypto';
import { postToServer, type ServerAddress } from '../core/server-address';

/** Prompt tokens per hashed block: the block size of Mooncake's traces. */
export const HASH_BLOCK_TOKENS = 512;

/** What a request sent as its prompt, kept in memory until the load is over (private runs store no text). */
export type SentPrompt =
  { kind: 'tokens'; ids: readonly number[] } | { kind: 'text'; text: string } | { kind: 'chat'; messages: unknown[] };

/**
 * One hash per block of `blockTokens` prompt tokens (the last block may be shorter), each
 * chained to the one before, so equal hashes mean equal prompts up to the end of that block:
 * the prefix a server's cache can reuse. 16 hex characters of SHA-256; the tokens themselves
 * cannot be read back from them.
 */
export function blockHashes(ids: readonly number[], blockTokens = HASH_BLOCK_TOKENS): string[] {
  const hashes: string[] = [];
  let previous = '';
  for (let start = 0; start < ids.length; start += blockTokens) {
    previous = crypto
      .createHash('sha256')
      .update(`${previous}:${ids.slice(start, start + blockTokens).join(',')}`)
      .digest('hex')
      .slice(0, 16);
    hashes.push(previous);
  }
  return hashes;
}

// A tokenize call takes milliseconds; a server that takes this long is not going to answer.
const post = <T>(server: ServerAddress, route: string, body: unknown) => postToServer<T>(server, route, body, { timeoutMs: 10_000 });

/**
 * The token ids llama-server builds for a prompt: token ids as sent; text tokenized with its
 * special tokens (BOS) as a completion would be; chat through the server's own template.
 */
async function promptTokenIds(server: ServerAddress, prompt: SentPrompt): Promise<number[]> {
  if (prompt.kind === 'tokens') return [...prompt.ids];
  let text: string;
  if (prompt.kind === 'chat') {
    const templated = await post<{ prompt?: unknown }>(server, '/apply-template', { messages: prompt.messages });
    if (typeof templated.prompt !== 'string') throw new Error('/apply-template returned no prompt');
    text = templated.prompt;
  } else text = prompt.text;
  const { tokens } = await post<{ tokens?: unknown }>(server, '/tokenize', { content: text, add_special: true, parse_special: true });
  if (!Array.isArray(tokens) || !tokens.every((token) => typeof token === 'number')) throw new Error('/tokenize returned no token ids');
  return tokens as number[];
}

/**
 * Block hashes for every request of a run, computed after the load so the tokenize calls do
 * not compete with measured requests. Equal prompts are tokenized once. Without a llama-server
 * (an endpoint, whose tokenizer cannot be asked) only token-id prompts get hashes; the first
 * failure leaves the rest unhashed rather than waiting out a timeout per request.
 */
export async function hashSentPrompts(
  prompts: ReadonlyMap<number, SentPrompt>,
  server: ServerAddress | null,
): Promise<{ seq: number; hashes: string[] | null }[]> {
  const bySource = new Map<string, string[] | null>();
  let failed = false;
  const rows: { seq: number; hashes: string[] | null }[] = [];
  for (const [seq, prompt] of prompts) {
    const key = prompt.kind === 'tokens' ? null : JSON.stringify(prompt);
    if (key !== null && bySource.has(key)) {
      rows.push({ seq, hashes: bySource.get(key)! });
      continue;
    }
    let hashes: string[] | null = null;
    if (prompt.kind === 'tokens') hashes = blockHashes(prompt.ids);
    else if (server && !failed) {
      try {
        hashes = blockHashes(await promptTokenIds(server, prompt));
      } catch {
        failed = true;
      }
    }
    if (key !== null) bySource.set(key, hashes);
    rows.push({ seq, hashes });
  }
  return rows;
}
