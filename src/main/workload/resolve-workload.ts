import crypto from 'node:crypto';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { generatorBudgetProblem, runGenerator } from './generators';
import { itemImageUris } from './item-images';
import type { TokenCounter } from './token-counter';
import type { ResolvedConversation, ResolvedItem, ResolvedWorkload, SessionDef, WorkloadDef, WorkloadItemDef } from './workload-types';

const DEFAULT_MAX_TOKENS = 128;
/** The requests an agent exchange may send when its item does not say: enough for a call, its result and an answer, twice. */
const DEFAULT_AGENT_STEPS = 4;

function conversationOf(
  turns: { user: string; reference?: string }[] | undefined,
  system: string | undefined,
  session: SessionDef | undefined,
): ResolvedConversation | undefined {
  if (!turns) return undefined;
  return {
    system: system ?? null,
    turns: turns.map((turn) => ({ user: turn.user, reference: turn.reference ?? null })),
    history: session?.history ?? 'actual',
    think_time: session?.think_time ?? { fixed_ms: 0 },
  };
}

/** An item's tools and, for an agent exchange, its scripted results: only the fields it sets, so items without tools keep their revision. */
function toolFieldsOf(item: WorkloadItemDef, session: SessionDef | undefined): Pick<ResolvedItem, 'tools' | 'tool_choice' | 'agent'> {
  return {
    ...(item.tools === undefined ? {} : { tools: item.tools }),
    ...(item.tool_choice === undefined ? {} : { tool_choice: item.tool_choice }),
    ...(item.tool_results === undefined
      ? {}
      : {
          agent: {
            tool_results: item.tool_results,
            max_steps: item.max_steps ?? DEFAULT_AGENT_STEPS,
            think_time: session?.think_time ?? { fixed_ms: 0 },
          },
        }),
  };
}

/** JSON with sorted keys, so the revision hash does not depend on key order in the file. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Where an item's image files are read from: beside the workload file (the services hand over checked absolute paths). */
const imageFolderOf = (source: string): string => (path.isAbsolute(source) ? path.dirname(source) : process.cwd());

/** An item's images, read and checked, or nothing for an item without them (its revision stays as it was). */
async function imagesOf(item: WorkloadItemDef, source: string, place: string): Promise<{ images?: string[] }> {
  return item.images ? { images: await itemImageUris(item.images, imageFolderOf(source), `Invalid workload ${source}: ${place}`) } : {};
}

/**
 * Turns a validated definition into the exact requests a run sends: generators expanded
 * with the engine's tokenizer, defaults applied, group checks merged into each item.
 */

export async function resolveWorkload(def: WorkloadDef, source: string, counter: TokenCounter): Promise<ResolvedWorkload> {
  // Definitions also arrive without passing the parser (over RPC, from stored runs).
  const overBudget = generatorBudgetProblem(def);
  if (overBudget)
    throw new AppError(
      ErrorCode.InvalidInput,
      `Invalid workload ${source}: groups[${overBudget.groupIndex}].generate: ${overBudget.message}`,
    );
  const defaults = def.defaults ?? {};
  const groups: ResolvedWorkload['groups'] = [];
  for (const group of def.groups) {
    const items: ResolvedItem[] = [];
    for (const [itemIndex, item] of (group.items ?? []).entries()) {
      items.push({
        id: item.id,
        group: group.name,
        messages: item.messages ?? null,
        prompt: item.prompt ?? null,
        sampling: {
          max_tokens: item.max_tokens ?? defaults.max_tokens ?? DEFAULT_MAX_TOKENS,
          temperature: item.temperature ?? defaults.temperature,
          top_p: item.top_p ?? defaults.top_p,
          seed: item.seed ?? defaults.seed,
          stop: item.stop ?? defaults.stop,
          ignore_eos: item.ignore_eos ?? defaults.ignore_eos,
        },
        response_format: item.response_format ?? null,
        repeat: item.repeat ?? 1,
        weight: item.weight ?? 1,
        checks: [...(group.accept ?? []), ...(item.accept ?? [])],
        target_input_tokens: null,
        input_tokens_exact: null,
        conversation: conversationOf(item.turns, item.system, group.session),
        ...(item.input === undefined ? {} : { embedding_inputs: typeof item.input === 'string' ? [item.input] : item.input }),
        ...(item.query === undefined ? {} : { rerank: { query: item.query, documents: item.documents ?? [] } }),
        ...toolFieldsOf(item, group.session),
        ...(item.lora === undefined ? {} : { lora: item.lora }),
        ...(await imagesOf(item, source, `groups[${def.groups.indexOf(group)}].items[${itemIndex}]`)),
      });
    }
    if (group.generate) {
      for (const generated of await runGenerator(group.name, group.generate, counter, source)) {
        items.push({
          id: generated.id,
          group: group.name,
          messages: generated.embedding_inputs ? null : generated.messages,
          prompt: null,
          sampling: {
            max_tokens: generated.max_tokens,
            temperature: defaults.temperature,
            top_p: defaults.top_p,
            seed: defaults.seed,
            stop: defaults.stop,
            // A replayed request answers with exactly the trace's output length.
            ignore_eos: generated.replay ? true : defaults.ignore_eos,
          },
          response_format: null,
          repeat: 1,
          weight: 1,
          checks: [...(group.accept ?? []), ...(generated.accept ?? [])],
          target_input_tokens: generated.target_input_tokens,
          input_tokens_exact: generated.input_tokens_exact,
          conversation: conversationOf(generated.turns, undefined, group.session),
          ...(generated.replay ? { replay: generated.replay } : {}),
          ...(generated.embedding_inputs ? { embedding_inputs: generated.embedding_inputs } : {}),
        });
      }
    }
    groups.push({ name: group.name, items });
  }
  const content = { name: def.name, description: def.description ?? '', groups };
  const revision = crypto.createHash('sha256').update(canonical(content)).digest('hex');
  return { ...content, revision, source };
}

export { canonical };
