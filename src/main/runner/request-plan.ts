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
  if (item.messages) return { path: '/v1/chat/completions', body: { ...body, messages: item.messages } };
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
