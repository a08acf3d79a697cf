import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { seededRandom } from '../core/random';
import { readTextFileCapped, MAX_INPUT_FILE_BYTES } from '../core/read-capped';
import type { TokenCounter } from './token-counter';
import { mostWordsWithin } from './token-length-search';
import { DEFAULT_BLOCK_TOKENS, readTrace, traceFile, traceWindow } from './trace';
import type { ChatMessage, GeneratorDef, ResolvedReplay, WorkloadDef } from './workload-types';

/**
 * What a whole workload's generators may produce. Each field is bounded by the schema, but
 * their product is not: 1000 families x 1000 members x 10^6-token prefixes fits in 200 bytes
 * and would take the process's memory. These sit far above any benchmark we know of.
 */
export const GENERATOR_CAPS = { requests: 100_000, promptTokens: 100_000_000 };

/** Requests and prompt tokens a generator will produce, computed from its numbers alone; a ShareGPT import is bounded by its file's size instead. */
export function generatorProduct(generator: GeneratorDef): { requests: number; promptTokens: number } {
  if ('synthetic' in generator)
    return { requests: generator.synthetic.count, promptTokens: generator.synthetic.count * generator.synthetic.input_tokens };
  if ('prefix_families' in generator) {
    const spec = generator.prefix_families;
    const requests = spec.prefixes * spec.suffixes;
    return { requests, promptTokens: requests * (spec.prefix_tokens + spec.suffix_tokens) };
  }
  if ('long_document' in generator)
    return {
      requests: generator.long_document.count,
      promptTokens: generator.long_document.count * generator.long_document.document_tokens,
    };
  if ('embeddings' in generator) {
    const spec = generator.embeddings;
    return { requests: spec.count, promptTokens: spec.count * spec.inputs_per_request * spec.input_tokens };
  }
  if ('conversations' in generator) {
    const spec = generator.conversations;
    // Turn k carries k user messages and k − 1 answers: the prompt tokens grow quadratically with the turns.
    const perConversation = Array.from({ length: spec.turns }, (_, k) => (k + 1) * spec.user_tokens + k * spec.answer_tokens).reduce(
      (sum, tokens) => sum + tokens,
      0,
    );
    return { requests: spec.count * spec.turns, promptTokens: spec.count * perConversation };
  }
  return { requests: 0, promptTokens: 0 };
}

const number = (value: number) => value.toLocaleString('en-US');

/** The first group at which the running totals pass a cap, with a message giving the numbers; null when the workload fits. */
export function generatorBudgetProblem(def: Pick<WorkloadDef, 'groups'>): { groupIndex: number; message: string } | null {
  let requests = 0;
  let promptTokens = 0;
  for (const [groupIndex, group] of def.groups.entries()) {
    if (!group.generate) continue;
    const product = generatorProduct(group.generate);
    requests += product.requests;
    promptTokens += product.promptTokens;
    if (requests > GENERATOR_CAPS.requests || promptTokens > GENERATOR_CAPS.promptTokens) {
      const sofar =
        groupIndex > 0 && (requests !== product.requests || promptTokens !== product.promptTokens) ? ' (with the groups before it)' : '';
      return {
        groupIndex,
        message: `generator of group "${group.name}" would produce${sofar} ${number(requests)} requests and ${number(promptTokens)} prompt tokens; generators may produce at most ${number(GENERATOR_CAPS.requests)} requests and ${number(GENERATOR_CAPS.promptTokens)} prompt tokens per workload`,
      };
    }
  }
  return null;
}

const WORDS = (
  'time person year way day thing man world life hand part child eye woman place work week case point government company number group problem fact ' +
  'be have do say get make go know take see come think look want give use find tell ask seem feel try leave call good new first last long great little own ' +
  'other old right big high different small large next early young important few public bad same able to of in for on with at by from up about into over ' +
  'after river mountain signal engine memory garden window letter market music paper table system theory method result model measure answer question ' +
  'light water stone cloud city road bridge forest ocean planet animal machine color number story order energy travel silver golden quiet rapid'
).split(' ');

export interface GeneratedPrompt {
  id: string;
  messages: ChatMessage[];
  /** Set by the conversations generator: the turns, each with a reference answer. */
  turns?: { user: string; reference: string }[];
  /** Set by the trace generator. */
  replay?: ResolvedReplay;
  /** Set by the embeddings generator: the texts of one /v1/embeddings request (its `messages` are empty). */
  embedding_inputs?: string[];
  max_tokens: number;
  target_input_tokens: number | null;
  input_tokens_exact: boolean | null;
  accept?: { contains: string }[];
}

function words(random: () => number, count: number): string[] {
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]!);
}

/**
 * Text of exactly `target` tokens by the engine's tokenizer: the most words that fit
 * (`mostWordsWithin`), then single-token padding for the last few. Reports when the tokenizer
 * cannot land exactly (it then stays just under).
 */
export async function textOfTokens(
  target: number,
  random: () => number,
  counter: TokenCounter,
  prefix = '',
): Promise<{ text: string; tokens: number; exact: boolean }> {
  const pool = words(random, Math.ceil(target * 1.5) + 8);
  const textFor = (n: number) => prefix + pool.slice(0, n).join(' ');
  const prefixTokens = prefix === '' ? 0 : await counter.count(prefix);
  const fit = await mostWordsWithin(target, pool.length, (n) => counter.count(textFor(n)), prefixTokens);
  let text = textFor(fit.words);
  let tokens = fit.tokens;
  for (let guard = 0; tokens < target && guard < 16; guard++) {
    const padded = `${text} a`;
    const paddedTokens = await counter.count(padded);
    if (paddedTokens > target) break;
    text = padded;
    tokens = paddedTokens;
  }
  return { text, tokens, exact: counter.exact && tokens === target };
}

interface ShareGptRecord {
  conversations?: { from?: string; value?: string }[];
}

/** ShareGPT-style JSON: a list of {conversations: [{from: human|gpt, value}]}; the turns up to the last human one. */
export async function importShareGpt(
  workloadFile: string,
  spec: { file: string; limit?: number; max_tokens?: number },
): Promise<GeneratedPrompt[]> {
  const file = path.resolve(path.dirname(workloadFile), spec.file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readTextFileCapped(file, `ShareGPT file (sharegpt import in ${workloadFile})`, MAX_INPUT_FILE_BYTES));
  } catch (error) {
    if (error instanceof AppError && error.code !== ErrorCode.NotFound) throw error;
    throw new AppError(
      ErrorCode.InvalidInput,
      `${file} (sharegpt import in ${workloadFile}): ${error instanceof AppError ? 'file not found' : `not valid JSON: ${(error as Error).message}`}`,
    );
  }
  if (!Array.isArray(parsed)) throw new AppError(ErrorCode.InvalidInput, `${file}: expected a JSON list of conversations`);
  const prompts: GeneratedPrompt[] = [];
  for (const [index, record] of (parsed as ShareGptRecord[]).entries()) {
    if (spec.limit && prompts.length >= spec.limit) break;
    const turns = record?.conversations;
    if (!Array.isArray(turns)) throw new AppError(ErrorCode.InvalidInput, `${file}: entry ${index} has no "conversations" list`);
    const messages: ChatMessage[] = [];
    for (const [turnIndex, turn] of turns.entries()) {
      if (typeof turn?.value !== 'string')
        throw new AppError(ErrorCode.InvalidInput, `${file}: entry ${index} turn ${turnIndex} has no string "value"`);
      const role =
        turn.from === 'human' || turn.from === 'user'
          ? 'user'
          : turn.from === 'gpt' || turn.from === 'assistant'
            ? 'assistant'
            : turn.from === 'system'
              ? 'system'
              : null;
      if (!role) throw new AppError(ErrorCode.InvalidInput, `${file}: entry ${index} turn ${turnIndex} has unknown speaker "${turn.from}"`);
      messages.push({ role, content: turn.value });
    }
    while (messages.length > 0 && messages[messages.length - 1]!.role !== 'user') messages.pop();
    if (messages.length === 0) continue;
    prompts.push({
      id: `sharegpt-${index}`,
      messages,
      max_tokens: spec.max_tokens ?? 256,
      target_input_tokens: null,
      input_tokens_exact: null,
    });
  }
  if (prompts.length === 0) throw new AppError(ErrorCode.InvalidInput, `${file}: no conversation with a human turn to import`);
  return prompts;
}

/** Expands one generator into concrete prompts, deterministically from its seed. */
export async function runGenerator(
  group: string,
  generator: GeneratorDef,
  counter: TokenCounter,
  workloadFile: string,
): Promise<GeneratedPrompt[]> {
  if ('synthetic' in generator) return syntheticPrompts(group, generator.synthetic, counter);
  if ('prefix_families' in generator) return prefixFamilyPrompts(group, generator.prefix_families, counter);
  if ('long_document' in generator) return longDocumentPrompts(group, generator.long_document, counter);
  if ('conversations' in generator) return conversationPrompts(group, generator.conversations, counter);
  if ('trace' in generator) return tracePrompts(group, generator.trace, workloadFile);
  if ('embeddings' in generator) return embeddingRequests(group, generator.embeddings, counter);
  return importShareGpt(workloadFile, generator.sharegpt);
}

/** Prompts of a given token length, of seeded random words. */
async function syntheticPrompts(
  group: string,
  spec: Extract<GeneratorDef, { synthetic: unknown }>['synthetic'],
  counter: TokenCounter,
): Promise<GeneratedPrompt[]> {
  const random = seededRandom(spec.seed ?? 1);
  const prompts: GeneratedPrompt[] = [];
  for (let index = 0; index < spec.count; index++) {
    const { text, exact } = await textOfTokens(spec.input_tokens, random, counter);
    prompts.push({
      id: `${group}-${index}`,
      messages: [{ role: 'user', content: text }],
      max_tokens: spec.output_tokens,
      target_input_tokens: spec.input_tokens,
      input_tokens_exact: exact,
    });
  }
  return prompts;
}

/** Requests to /v1/embeddings of `inputs_per_request` texts, each of a given token length, of seeded random words. */
async function embeddingRequests(
  group: string,
  spec: Extract<GeneratorDef, { embeddings: unknown }>['embeddings'],
  counter: TokenCounter,
): Promise<GeneratedPrompt[]> {
  const random = seededRandom(spec.seed ?? 1);
  const requests: GeneratedPrompt[] = [];
  for (let index = 0; index < spec.count; index++) {
    const inputs: string[] = [];
    let exact = true;
    for (let input = 0; input < spec.inputs_per_request; input++) {
      const text = await textOfTokens(spec.input_tokens, random, counter);
      inputs.push(text.text);
      exact &&= text.exact;
    }
    requests.push({
      id: `${group}-${index}`,
      messages: [],
      embedding_inputs: inputs,
      max_tokens: 1,
      // Per input: each text is embedded as a sequence of its own.
      target_input_tokens: spec.input_tokens,
      input_tokens_exact: exact,
    });
  }
  return requests;
}

/** Families of prompts sharing a long prefix, each with its own short question: what a prompt cache is for. */
async function prefixFamilyPrompts(
  group: string,
  spec: Extract<GeneratorDef, { prefix_families: unknown }>['prefix_families'],
  counter: TokenCounter,
): Promise<GeneratedPrompt[]> {
  const random = seededRandom(spec.seed ?? 1);
  const prompts: GeneratedPrompt[] = [];
  for (let family = 0; family < spec.prefixes; family++) {
    const prefix = await textOfTokens(spec.prefix_tokens, random, counter, `Document ${family}. `);
    for (let suffix = 0; suffix < spec.suffixes; suffix++) {
      const full = await textOfTokens(spec.prefix_tokens + spec.suffix_tokens, random, counter, `${prefix.text}\nQuestion ${suffix}: `);
      prompts.push({
        id: `${group}-p${family}-s${suffix}`,
        messages: [{ role: 'user', content: full.text }],
        max_tokens: spec.output_tokens,
        target_input_tokens: spec.prefix_tokens + spec.suffix_tokens,
        input_tokens_exact: full.exact,
      });
    }
  }
  return prompts;
}

/** Long documents with one fact near the end, asked for at the end: whether the model still finds it. */
async function longDocumentPrompts(
  group: string,
  spec: Extract<GeneratorDef, { long_document: unknown }>['long_document'],
  counter: TokenCounter,
): Promise<GeneratedPrompt[]> {
  const random = seededRandom(spec.seed ?? 1);
  const prompts: GeneratedPrompt[] = [];
  for (let index = 0; index < spec.count; index++) {
    const code = String(100000 + Math.floor(random() * 900000));
    const fact = ` The access code for vault ${index} is ${code}. `;
    const question = `\n\nWhat is the access code for vault ${index}? Answer with the code only.`;
    const factTokens = await counter.count(fact + question);
    const fillerTokens = Math.max(1, spec.document_tokens - factTokens);
    const before = await textOfTokens(Math.max(1, Math.round(fillerTokens * (spec.fact_position ?? 0.9))), random, counter);
    const after = await textOfTokens(Math.max(1, fillerTokens - before.tokens), random, counter);
    const content = `${before.text}.${fact}${after.text}.${question}`;
    const total = await counter.count(content);
    prompts.push({
      id: `${group}-${index}`,
      messages: [{ role: 'user', content }],
      max_tokens: spec.output_tokens,
      target_input_tokens: spec.document_tokens,
      input_tokens_exact: counter.exact && total === spec.document_tokens,
      accept: [{ contains: code }],
    });
  }
  return prompts;
}

/** Conversations of several turns, each user turn and its reference answer of given token lengths. */
async function conversationPrompts(
  group: string,
  spec: Extract<GeneratorDef, { conversations: unknown }>['conversations'],
  counter: TokenCounter,
): Promise<GeneratedPrompt[]> {
  const random = seededRandom(spec.seed ?? 1);
  const prompts: GeneratedPrompt[] = [];
  for (let index = 0; index < spec.count; index++) {
    const turns: { user: string; reference: string }[] = [];
    for (let turn = 0; turn < spec.turns; turn++) {
      const user = await textOfTokens(spec.user_tokens, random, counter, `Turn ${turn + 1}. `);
      const reference = await textOfTokens(spec.answer_tokens, random, counter);
      turns.push({ user: user.text, reference: reference.text });
    }
    prompts.push({
      id: `${group}-c${index}`,
      messages: [],
      turns,
      max_tokens: spec.answer_tokens,
      target_input_tokens: null,
      input_tokens_exact: null,
    });
  }
  return prompts;
}

/** A recorded trace's requests in its time window, to replay with their arrival times and shared prompt blocks. */
async function tracePrompts(
  group: string,
  spec: Extract<GeneratorDef, { trace: unknown }>['trace'],
  workloadFile: string,
): Promise<GeneratedPrompt[]> {
  const blockTokens = spec.block_tokens ?? DEFAULT_BLOCK_TOKENS;
  const window = traceWindow(await readTrace(traceFile(workloadFile, spec.file), blockTokens), {
    speed: spec.speed,
    startS: spec.start_s,
    endS: spec.end_s,
  });
  if (window.length === 0)
    throw new AppError(ErrorCode.InvalidInput, `${spec.file}: no request of the trace falls in the window asked for`);
  return window.map(({ record, arrivalMs }, index) => ({
    id: `${group}-${index}`,
    messages: [],
    max_tokens: record.output_length,
    target_input_tokens: record.input_length,
    input_tokens_exact: true,
    replay: { hash_ids: record.hash_ids, input_length: record.input_length, block_tokens: blockTokens, arrival_ms: arrivalMs },
  }));
}
