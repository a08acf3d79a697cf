import type { LiveRaceRequest } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { generatorProduct, runGenerator } from '../workload/generators';
import { readWorkloadFile } from '../workload/read-workload';
import { estimatingTokenCounter } from '../workload/token-counter';
import type { GeneratorDef, WorkloadDef, WorkloadGroupDef, WorkloadItemDef } from '../workload/workload-types';
import { generatorFilesWithin, workloadPathWithin, type ServiceAccess } from './access';

/** Kinds of written item a race cannot stream as one answer. */
function unraceable(item: WorkloadItemDef): string | null {
  if (item.turns) return 'a conversation (turns)';
  if (item.tool_results) return 'an agent exchange (tool_results)';
  if (item.input !== undefined) return 'an embeddings request';
  if (item.query !== undefined) return 'a reranking request';
  return null;
}

/** Kinds of generator whose items a race cannot stream as one answer. */
function unraceableGenerator(generator: GeneratorDef): string | null {
  if ('conversations' in generator) return 'a conversation (the conversations generator)';
  if ('embeddings' in generator) return 'an embeddings request';
  if ('trace' in generator) return 'a timed request of a trace replay';
  return null;
}

/**
 * The most prompt tokens a race generates to find one item: a group's prompts are seeded one after
 * another, so an item is found by generating its group, and a group larger than this is refused.
 */
const RACE_GENERATED_TOKENS_MAX = 1_000_000;

/**
 * A generated group's prompts as a race sends them. No server is at hand before the lanes start and
 * each lane's model has its own tokenizer, so the text is sized by the word-count estimate: every
 * lane is sent the same words, and each run records the tokens its own tokenizer made of them.
 */
async function generatedItems(group: WorkloadGroupDef & { generate: GeneratorDef }, file: string): Promise<WorkloadItemDef[]> {
  const { promptTokens } = generatorProduct(group.generate);
  if (promptTokens > RACE_GENERATED_TOKENS_MAX)
    throw new AppError(
      ErrorCode.InvalidInput,
      `item: group ${group.name} of ${file} generates ${promptTokens.toLocaleString('en-US')} prompt tokens, and a race generates at most ${RACE_GENERATED_TOKENS_MAX.toLocaleString('en-US')} to find one of its items: race an item of a smaller group, or write the prompt (--prompt)`,
    );
  const prompts = await runGenerator(group.name, group.generate, estimatingTokenCounter, file);
  return prompts.map((prompt) => ({ id: prompt.id, messages: prompt.messages }));
}

/** The item named `id` among a workload's written and generated items, or what there is where none is. */
async function findItem(def: WorkloadDef, file: string, id: string): Promise<WorkloadItemDef> {
  const written = def.groups.flatMap((group) => group.items ?? []);
  const item = written.find((candidate) => candidate.id === id);
  if (item) {
    const kind = unraceable(item);
    if (kind) throw new AppError(ErrorCode.InvalidInput, `item: ${id} of ${file} is ${kind}; a race streams one answer to one request`);
    return item;
  }
  const generatedNames: string[] = [];
  const generators = def.groups.flatMap((group) => (group.generate ? [{ ...group, generate: group.generate }] : []));
  for (const group of generators) {
    if (unraceableGenerator(group.generate)) continue;
    const generated = await generatedItems(group, file);
    const found = generated.find((candidate) => candidate.id === id);
    if (found) return found;
    if (generated.length > 0)
      generatedNames.push(
        generated.length === 1 ? generated[0]!.id : `${generated[0]!.id} … ${generated.at(-1)!.id} (${generated.length})`,
      );
  }
  // Not one of the raceable ones: an item of a conversation, embeddings or trace group is named for what it is.
  for (const group of generators) {
    const kind = unraceableGenerator(group.generate);
    if (kind && id.startsWith(`${group.name}-`))
      throw new AppError(ErrorCode.InvalidInput, `item: ${id} of ${file} is ${kind}; a race streams one answer to one request`);
  }
  const writtenNames = written.map((candidate) => candidate.id).join(', ') || 'none';
  throw new AppError(
    ErrorCode.InvalidInput,
    `item: ${file} has no item "${id}"; its written items are ${writtenNames}${
      generatedNames.length > 0 ? `; the ones it generates are ${generatedNames.join(', ')}` : ''
    }`,
  );
}

/**
 * The item every lane is given: the typed prompt, or the named item of a workload held to the face's
 * roots (its image files too), written or generated, refused where it is missing or is not one
 * streamed answer.
 */
export async function racedItem(request: LiveRaceRequest, access: ServiceAccess): Promise<WorkloadItemDef> {
  if ((request.prompt === undefined) === (request.item === undefined))
    throw new AppError(
      ErrorCode.InvalidInput,
      'a race needs a prompt or a workload item (--prompt TEXT or --item WORKLOAD#ID), one of them',
    );
  if (request.prompt !== undefined) {
    if (request.prompt.trim() === '') throw new AppError(ErrorCode.InvalidInput, 'prompt: the race needs a prompt that is not blank');
    return { id: 'prompt', messages: [{ role: 'user', content: request.prompt }] };
  }
  const { workload, id } = request.item!;
  const file = await workloadPathWithin(access, workload);
  const def = await generatorFilesWithin(access, await readWorkloadFile(file), file);
  // Sent once, at the race's answer length.
  const raced: WorkloadItemDef = { ...(await findItem(def, file, id)), id: 'prompt' };
  delete raced.repeat;
  delete raced.weight;
  delete raced.max_tokens;
  return raced;
}
