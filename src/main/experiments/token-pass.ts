import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ServerProfile } from '../../shared/contract/server';
import { ErrorCode } from '../../shared/errors';
import { AppError, throwIfCancelled } from '../core/errors';
import { postToServer, type ServerAddress } from '../core/server-address';
import type { ServerManager } from '../server/server-manager';
import { resolveWorkload } from '../workload/resolve-workload';
import { llamaServerTokenCounter } from '../workload/token-counter';
import type { ResolvedItem, WorkloadDef } from '../workload/workload-types';

/** Fixed so that two passes over the same file ask for the same thing; greedy decoding ignores it anyway. */
export const TOKEN_PASS_SEED = 42;

/** The evaluation text: seeded sampling from the baseline, so the text is varied yet reproducible. */
export const EVAL_TEXT_SAMPLING = { temperature: 0.8, seed: 1 } as const;
export const EVAL_TEXT_PROMPT =
  'Write a long, detailed essay about the history of maps and navigation, from the earliest charts to satellite positioning. Use several paragraphs.';

/** Token passes can take minutes on a large file: a generous limit per call. */
const post = <T>(server: ServerAddress, route: string, body: unknown, signal?: AbortSignal) =>
  postToServer<T>(server, route, body, { timeoutMs: 600_000, signal });

/** A llama-server of its own for an untimed pass over one file; `stop` must be called. */
export async function startPassServer(
  servers: ServerManager,
  file: string,
  profile: ServerProfile,
): Promise<{ address: ServerAddress; contextPerSlot: number | null; stop: () => Promise<void> }> {
  const server = await servers.prepare({ modelRef: file, profile, coldStartProbe: false });
  const snapshot = await server.start();
  const stop = async () => void (await server.stop());
  if (snapshot.state !== 'ready' || !snapshot.baseUrl) {
    await stop();
    throw new AppError(
      ErrorCode.ServerStartFailed,
      `the server for the token pass on ${file} did not start: ${snapshot.fault?.message ?? snapshot.state}`,
    );
  }
  return { address: server.address!, contextPerSlot: snapshot.effectiveConfig?.contextPerSlot ?? null, stop };
}

/** The prompt text the server would build for an item: the chat template applied by the server itself. */
async function promptFor(server: ServerAddress, item: ResolvedItem, signal?: AbortSignal): Promise<string> {
  if (!item.messages) return item.prompt ?? '';
  const { prompt } = await post<{ prompt?: unknown }>(server, '/apply-template', { messages: item.messages }, signal);
  if (typeof prompt !== 'string') throw new AppError(ErrorCode.RequestFailed, '/apply-template returned no prompt');
  return prompt;
}

/** The grammar the timed request would have used, in /completion's terms, so both passes decode under the same constraint. */
function schemaFor(item: ResolvedItem): Record<string, unknown> {
  if (item.response_format?.type === 'json_schema' && item.response_format.json_schema)
    return { json_schema: item.response_format.json_schema.schema };
  if (item.response_format?.type === 'json_object') return { json_schema: {} };
  return {};
}

/**
 * The workload's items, each once, resolved with this server's tokenizer. Keys join group
 * and id, because ids need only be unique within a group.
 */
export async function passItems(
  server: ServerAddress,
  workload: { def: WorkloadDef; file: string },
): Promise<{ key: string; item: ResolvedItem }[]> {
  const resolved = await resolveWorkload(workload.def, workload.file, llamaServerTokenCounter(server));
  return resolved.groups.flatMap((group) => group.items.map((item) => ({ key: `${group.name}/${item.id}`, item })));
}

/**
 * Greedy token ids of every item, from non-streaming /completion with `return_tokens`:
 * chat streams carry no token ids, and logprobs would add per-token work to the timed run,
 * so ids come from this separate, untimed pass. No prompt cache, so an earlier item cannot
 * change a later one's numerics.
 */
export async function collectTokens(
  server: ServerAddress,
  items: { key: string; item: ResolvedItem }[],
  signal?: AbortSignal,
): Promise<Map<string, number[]>> {
  const tokens = new Map<string, number[]>();
  for (const { key, item } of items) {
    throwIfCancelled(signal);
    const prompt = await promptFor(server, item, signal);
    const body = {
      prompt,
      n_predict: item.sampling.max_tokens ?? 64,
      temperature: 0,
      seed: TOKEN_PASS_SEED,
      return_tokens: true,
      cache_prompt: false,
      stream: false,
      ...(item.sampling.ignore_eos !== undefined ? { ignore_eos: item.sampling.ignore_eos } : {}),
      ...(item.sampling.stop ? { stop: item.sampling.stop } : {}),
      ...schemaFor(item),
    };
    const response = await post<{ tokens?: unknown }>(server, '/completion', body, signal);
    if (!Array.isArray(response.tokens) || !response.tokens.every((token) => typeof token === 'number'))
      throw new AppError(ErrorCode.RequestFailed, '/completion returned no token ids (does this llama-server support return_tokens?)');
    tokens.set(key, response.tokens as number[]);
  }
  return tokens;
}

/**
 * Token ids of a fixed mixed string: two files whose ids differ here have different
 * vocabularies, and comparing their token ids would be meaningless.
 */
export async function vocabularyProbe(server: ServerAddress, signal?: AbortSignal): Promise<number[]> {
  const { tokens } = await post<{ tokens?: unknown[] }>(
    server,
    '/tokenize',
    { content: 'The quick brown fox: 0123456789, naïve café. <|im_start|> 東京', add_special: true, parse_special: true },
    signal,
  );
  if (!Array.isArray(tokens)) throw new AppError(ErrorCode.RequestFailed, '/tokenize returned no tokens');
  return tokens as number[];
}

/** Tokens as llama-perplexity will see the text: with the model's special prefix (BOS), special strings as plain text. */
export async function countTokens(server: ServerAddress, text: string, signal?: AbortSignal): Promise<number> {
  const { tokens } = await post<{ tokens?: unknown[] }>(
    server,
    '/tokenize',
    { content: text, add_special: true, parse_special: false },
    signal,
  );
  if (!Array.isArray(tokens)) throw new AppError(ErrorCode.RequestFailed, '/tokenize returned no tokens');
  return tokens.length;
}

/**
 * The default KLD evaluation text, sampled from the baseline until it tokenizes to at least
 * `minTokens`: end-of-text is ignored so an early stop cannot leave too little, and a text
 * that re-tokenizes shorter than it was sampled is continued from where it ended (the
 * continuation sees the prompt and the text so far, as one longer sample would).
 */
export async function generateEvalText(
  server: ServerAddress,
  minTokens: number,
  contextPerSlot: number | null,
  signal?: AbortSignal,
): Promise<{ text: string; prompt: string; requested: number; sampling: typeof EVAL_TEXT_SAMPLING }> {
  let prompt = EVAL_TEXT_PROMPT;
  try {
    prompt = await promptFor(server, { messages: [{ role: 'user', content: EVAL_TEXT_PROMPT }] } as ResolvedItem, signal);
  } catch {
    // A model without a chat template still continues plain text.
  }
  const promptTokens = await countTokens(server, prompt, signal);
  let text = '';
  let requested = 0;
  // Sampled tokens often merge when the text is tokenized again; ask for a little more than needed.
  let want = Math.ceil(minTokens * 1.08) + 16;
  for (let round = 0; round < 4 && want > 0; round++) {
    const room = contextPerSlot === null ? want : contextPerSlot - promptTokens - requested - 8;
    const n = Math.min(want, room);
    if (n <= 0) break;
    const response = await post<{ content?: unknown }>(
      server,
      '/completion',
      {
        prompt: prompt + text,
        n_predict: n,
        ...EVAL_TEXT_SAMPLING,
        seed: EVAL_TEXT_SAMPLING.seed + round,
        ignore_eos: true,
        cache_prompt: false,
        stream: false,
      },
      signal,
    );
    if (typeof response.content !== 'string')
      throw new AppError(ErrorCode.RequestFailed, '/completion returned no content for the evaluation text');
    text += response.content;
    requested += n;
    want = minTokens - (await countTokens(server, text, signal));
    if (want > 0) want += 16;
  }
  return { text, prompt: EVAL_TEXT_PROMPT, requested, sampling: EVAL_TEXT_SAMPLING };
}

/**
 * The generated evaluation text is a property of the baseline file and the generation
 * settings, so it is made once per file and reused: sampling a thousand tokens is the
 * slowest part of a small experiment. Keyed by the file's sha256, never by its path.
 */
export function evalTextCache(dir: string, modelSha256: string, minTokens: number): { read(): string | null; write(text: string): void } {
  const key = crypto
    .createHash('sha256')
    .update(JSON.stringify({ modelSha256, minTokens, prompt: EVAL_TEXT_PROMPT, ...EVAL_TEXT_SAMPLING, version: 1 }))
    .digest('hex')
    .slice(0, 32);
  const file = path.join(dir, `${key}.txt`);
  return {
    read: () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null),
    write(text) {
      fs.mkdirSync(dir, { recursive: true });
      const temporary = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, text);
      fs.renameSync(temporary, file);
    },
  };
}
