import crypto from 'node:crypto';
import { EMBEDDINGS_PATH, RERANK_PATH } from '../client/json-answer-client';
import { promptTokenIds, type TokenRange } from '../workload/trace';
import type { ExchangeMessage, ResolvedItem, ResolvedReplay, ResolvedWorkload } from '../workload/workload-types';

/**
 * The order in which items are sent: every item `repeat × weight` times per cycle, groups
 * and items in file order, cycling when a run asks for more requests than one cycle holds.
 */
export class RequestPlan {
  private readonly cycle: ResolvedItem[];
  /** Whether a send can be several requests (a conversation, an agent exchange) rather than one. */
  readonly sendsSeveral: boolean;
  /** Whether the workload replays a trace (its requests carry their own arrival times). Asked on every send, so found once. */
  readonly hasReplay: boolean;

  constructor(workload: ResolvedWorkload) {
    this.cycle = workload.groups.flatMap((group) =>
      group.items.flatMap((item) => Array.from({ length: item.repeat * item.weight }, () => item)),
    );
    if (this.cycle.length === 0) throw new Error(`workload ${workload.name} has no items`);
    this.sendsSeveral = this.cycle.some((item) => item.conversation !== undefined || item.agent !== undefined);
    this.hasReplay = this.cycle.some((item) => item.replay !== undefined);
  }

  get cycleLength(): number {
    return this.cycle.length;
  }

  item(index: number): ResolvedItem {
    return this.cycle[index % this.cycle.length]!;
  }
}

/** The messages with the images shown beside the last user message's text, as OpenAI's content parts. */
function withImages(messages: readonly ExchangeMessage[], images: readonly string[]): unknown[] {
  const last = messages.findLastIndex((message) => message.role === 'user');
  return messages.map((message, index) =>
    index === last
      ? {
          ...message,
          content: [{ type: 'text', text: message.content }, ...images.map((url) => ({ type: 'image_url', image_url: { url } }))],
        }
      : message,
  );
}

/** References of the images sent lately, by data URI: every request of an item sends the same string, read once. */
const imageReferences = new Map<string, string>();
const IMAGE_REFERENCES_KEPT = 64;

function imageReference(url: string): string {
  let reference = imageReferences.get(url);
  if (reference === undefined) {
    const bytes = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64');
    const mime = url.slice('data:'.length, url.indexOf(';'));
    reference = `${mime}, ${bytes.length} bytes, sha256 ${crypto.createHash('sha256').update(bytes).digest('hex')}`;
    if (imageReferences.size >= IMAGE_REFERENCES_KEPT) imageReferences.clear();
    imageReferences.set(url, reference);
  }
  return reference;
}

/**
 * The messages as a run keeps them: each image a short reference (its type, size and sha256) in
 * place of its bytes, so a run of a thousand requests does not keep the picture a thousand times.
 */
export function messagesAsKept(messages: readonly unknown[]): unknown[] {
  return messages.map((message) => {
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content)) return message;
    return {
      ...(message as object),
      content: content.map((part: { type?: string; image_url?: { url?: string } }) => {
        const url = part?.type === 'image_url' ? part.image_url?.url : undefined;
        if (typeof url !== 'string' || !url.startsWith('data:')) return part;
        return { type: 'image_url', image_url: { url: imageReference(url) } };
      }),
    };
  });
}

/** The request body for one item, in the OpenAI-compatible shape every engine accepts. */
export function requestFor(item: Omit<ResolvedItem, 'messages'> & { messages: readonly ExchangeMessage[] | null }): {
  path: string;
  body: Record<string, unknown>;
} {
  if (item.embedding_inputs) return { path: EMBEDDINGS_PATH, body: { input: item.embedding_inputs } };
  if (item.rerank) return { path: RERANK_PATH, body: { query: item.rerank.query, documents: item.rerank.documents } };
  const sampling = Object.fromEntries(Object.entries(item.sampling).filter(([, value]) => value !== undefined));
  const body: Record<string, unknown> = { ...sampling };
  if (item.response_format) body.response_format = item.response_format;
  if (item.tools) body.tools = item.tools;
  if (item.tool_choice !== undefined) body.tool_choice = item.tool_choice;
  if (item.lora) body.lora = item.lora;
  if (item.messages)
    return {
      path: '/v1/chat/completions',
      body: { ...body, messages: item.images ? withImages(item.messages, item.images) : item.messages },
    };
  return { path: '/v1/completions', body: { ...body, prompt: item.prompt } };
}

/**
 * A replayed trace request: token ids to /v1/completions, no chat template, so equal hash ids
 * stay token-identical blocks the server's prefix cache can reuse.
 */
export function replayRequest(
  item: ResolvedItem,
  replay: ResolvedReplay,
  range: TokenRange,
): { path: string; body: Record<string, unknown> } {
  const sampling = Object.fromEntries(Object.entries(item.sampling).filter(([, value]) => value !== undefined));
  return { path: '/v1/completions', body: { ...sampling, prompt: promptTokenIds(replay, replay.block_tokens, range) } };
}
