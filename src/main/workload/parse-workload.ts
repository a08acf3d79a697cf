import type { Ajv, ErrorObject } from 'ajv';
import { Composer, isMap, isScalar, LineCounter, Parser, visit, YAMLParseError, type CST, type Document } from 'yaml';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { groupServes, workloadServes } from './workload-serves';
import { generatorBudgetProblem } from './generators';
import type { AcceptanceCheck, WorkloadDef, WorkloadItemDef } from './workload-types';
import { newAjv, workloadValidator } from './workload-validator';

const MAX_ALIASES = 100;
/**
 * Collections nested deeper than this are refused as the parser reaches them. The YAML composer
 * recurses once per level and gives up near a thousand anyway; `[` × 4 million used to build its
 * syntax tree for minutes until the heap ran out.
 */
export const MAX_NESTING = 200;
/** Problems located and listed; past them only their number is given (locating 60,000 says nothing more). */
export const MAX_LISTED_PROBLEMS = 100;
/**
 * Object keys in one JSON Schema of a workload (an acceptance check, a response format), counted
 * before Ajv compiles it: compiling costs time that grows faster than the schema (800 properties
 * took 1.9 s and 1,600 took 6.6 s on a busy two-core machine; 4,000 overflowed the stack), and a
 * run compiles each acceptance schema again on the thread that runs it.
 */
export const MAX_SCHEMA_KEYS = 1000;

export interface WorkloadProblem {
  file: string;
  line: number | null;
  column: number | null;
  field: string;
  message: string;
}

/**
 * Refuses the workload with its problems; `total` counts those past MAX_LISTED_PROBLEMS, which
 * callers do not locate. The last listed problem then says how many more there are.
 */
function fail(file: string, problems: WorkloadProblem[], total = problems.length): never {
  const lines = problems
    .slice(0, 20)
    .map(
      (problem) =>
        `${problem.file}${problem.line !== null ? `:${problem.line}:${problem.column}` : ''}: ${problem.field ? `${problem.field}: ` : ''}${problem.message}`,
    );
  if (total > 20) lines.push(`… and ${total - 20} more`);
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS);
  if (total > listed.length)
    listed.push({
      file,
      line: null,
      column: null,
      field: '',
      message: `and ${total - listed.length} more problems (the first ${listed.length} are listed)`,
    });
  throw new AppError(ErrorCode.InvalidInput, `Invalid workload ${file}:\n${lines.join('\n')}`, { problems: listed, total });
}

function pointerToPath(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => {
      const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^\d+$/.test(key) ? Number(key) : key;
    });
}

function fieldName(pathParts: (string | number)[]): string {
  return pathParts.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
}

/** A place in the text, as the problems name it. */
function position(counter: LineCounter, offset: number): { line: number; column: number } {
  const { line, col } = counter.linePos(offset);
  return { line, column: col };
}

class NestingTooDeep extends Error {
  constructor(readonly offset: number) {
    super(`nested more than ${MAX_NESTING} levels deep, where a workload needs a handful: look for "[" or "{" left unclosed`);
  }
}

/** yaml's parser, stopped as soon as its stack of open collections grows past MAX_NESTING. */
class NestingLimitedParser extends Parser {
  override *next(source: string): Generator<CST.Token, void> {
    const offset = this.offset;
    yield* super.next(source);
    if (this.stack.length > MAX_NESTING) throw new NestingTooDeep(offset);
  }
}

interface YamlProblem {
  offset: number;
  message: string;
}

/**
 * Every repeated key of every map, found with a set per map. yaml's own check (`uniqueKeys`)
 * compares each key with every earlier one: a map of 150,000 keys took minutes.
 */
function duplicateKeys(doc: Document.Parsed): YamlProblem[] {
  const found: YamlProblem[] = [];
  visit(doc, {
    Map(_, map) {
      const seen = new Set<unknown>();
      for (const { key } of map.items) {
        // yaml compares scalar keys with ===, under which NaN is no duplicate of NaN.
        if (!isScalar(key) || Number.isNaN(key.value)) continue;
        if (seen.has(key.value)) found.push({ offset: key.range?.[0] ?? 0, message: 'Map keys must be unique' });
        seen.add(key.value);
      }
    },
  });
  return found.sort((a, b) => a.offset - b.offset);
}

/** Both lists in the text's order, yaml's own order kept among its problems. */
function mergeByOffset(own: YamlProblem[], extra: YamlProblem[]): YamlProblem[] {
  const merged: YamlProblem[] = [];
  let next = 0;
  for (const problem of own) {
    while (next < extra.length && extra[next]!.offset < problem.offset) merged.push(extra[next++]!);
    merged.push(problem);
  }
  return merged.concat(extra.slice(next));
}

/**
 * What `parseDocument` does, with a parser that refuses deep nesting and the duplicate-key check
 * done in linear time. Problems are the first line of yaml's own messages.
 */
function parseYaml(text: string, counter: LineCounter): { doc: Document.Parsed; problems: YamlProblem[] } {
  const parser = new NestingLimitedParser(counter.addNewLine);
  const composer = new Composer({ uniqueKeys: false, strict: true });
  let doc: Document.Parsed | null = null;
  for (const next of composer.compose(parser.parse(text), true, text.length)) {
    if (!doc) doc = next;
    else {
      doc.errors.push(
        new YAMLParseError(
          [next.range[0], next.range[1]],
          'MULTIPLE_DOCS',
          'Source contains multiple documents; please use YAML.parseAllDocuments()',
        ),
      );
      break;
    }
  }
  // compose() with forceDoc always yields a document.
  const parsed = doc!;
  const own = parsed.errors.map((error) => ({ offset: error.pos[0], message: error.message.split('\n')[0]! }));
  return { doc: parsed, problems: mergeByOffset(own, duplicateKeys(parsed)) };
}

function locate(doc: Document, counter: LineCounter, pathParts: (string | number)[]): { line: number | null; column: number | null } {
  // A field is pointed at by its key: the line a user scans for.
  const parent = doc.getIn(pathParts.slice(0, -1), true);
  const last = pathParts[pathParts.length - 1];
  if (typeof last === 'string' && isMap(parent)) {
    const pair = parent.items.find((item) => isScalar(item.key) && item.key.value === last);
    const range = pair && isScalar(pair.key) ? pair.key.range : undefined;
    if (range) {
      const position = counter.linePos(range[0]);
      return { line: position.line, column: position.col };
    }
  }
  for (let depth = pathParts.length; depth >= 0; depth--) {
    const node = doc.getIn(pathParts.slice(0, depth), true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) {
      const position = counter.linePos(node.range[0]);
      return { line: position.line, column: position.col };
    }
  }
  return { line: null, column: null };
}

function describeSchemaError(error: ErrorObject): { path: (string | number)[]; message: string } {
  const base = pointerToPath(error.instancePath);
  switch (error.keyword) {
    case 'additionalProperties': {
      const extra = (error.params as { additionalProperty: string }).additionalProperty;
      return { path: [...base, extra], message: `unknown field "${extra}"` };
    }
    case 'required':
      return { path: base, message: `missing required field "${(error.params as { missingProperty: string }).missingProperty}"` };
    case 'enum':
      return {
        path: base,
        message: `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.map((value) => JSON.stringify(value)).join(', ')}`,
      };
    case 'oneOf':
      return { path: base, message: 'must have exactly one of "messages", "prompt", "turns", "input" or "query"' };
    case 'anyOf':
      return { path: base, message: 'must have "items" or "generate"' };
    default:
      return { path: base, message: error.message ?? error.keyword };
  }
}

/** Object keys in `value`, counted up to just past `limit`. */
function countKeys(value: unknown, limit: number): number {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0 && count <= limit) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    const values = Object.values(node);
    if (!Array.isArray(node)) count += values.length;
    for (const value of values) pending.push(value);
  }
  return count;
}

/** Why a JSON Schema given in a workload cannot be used, or null: too large to compile in bounded time, or not valid. */
function jsonSchemaProblem(ajv: () => Ajv, schema: unknown): string | null {
  if (countKeys(schema, MAX_SCHEMA_KEYS) > MAX_SCHEMA_KEYS)
    return `a JSON Schema here may hold at most ${MAX_SCHEMA_KEYS.toLocaleString('en-US')} keys (properties, keywords); this one has more: keep it to the fields the check needs`;
  try {
    ajv().compile(schema as object);
    return null;
  } catch (error) {
    return `not a valid JSON Schema: ${(error as Error).message}`;
  }
}

/** Checks the schema cannot express: patterns compile, JSON schemas compile, ids are unique. */
function semanticProblems(def: WorkloadDef): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  // Ajv is loaded only for a workload that gives a JSON Schema of its own.
  let compiler: Ajv | null = null;
  const ajv = () => (compiler ??= newAjv({ strict: false }));
  const checkList = (checks: AcceptanceCheck[] | undefined, base: (string | number)[]) => {
    checks?.forEach((check, index) => {
      if ('regex' in check) {
        try {
          new RegExp(check.regex, 'u');
        } catch (error) {
          problems.push({
            path: [...base, 'accept', index, 'regex'],
            message: `not a valid regular expression: ${(error as Error).message}`,
          });
        }
      }
      if ('json_schema' in check) {
        const problem = jsonSchemaProblem(ajv, check.json_schema);
        if (problem) problems.push({ path: [...base, 'accept', index, 'json_schema'], message: problem });
      }
    });
  };
  problems.push(...vectorProblems(def));
  const groupNames = new Set<string>();
  const itemIds = new Set<string>();
  def.groups.forEach((group, groupIndex) => {
    const conversations =
      (group.items ?? []).some((item) => item.turns || item.tool_results) || (group.generate && 'conversations' in group.generate);
    if (group.session && !conversations)
      problems.push({
        path: ['groups', groupIndex, 'session'],
        message:
          'session applies to conversations and agent exchanges: give items "turns" or "tool_results", or use the conversations generator',
      });
    const uniform = group.session?.think_time && 'uniform_ms' in group.session.think_time ? group.session.think_time.uniform_ms : null;
    if (uniform && uniform[0] > uniform[1])
      problems.push({
        path: ['groups', groupIndex, 'session', 'think_time', 'uniform_ms'],
        message: `the low end (${uniform[0]}) is above the high end (${uniform[1]})`,
      });
    if (groupNames.has(group.name))
      problems.push({ path: ['groups', groupIndex, 'name'], message: `duplicate group name "${group.name}"` });
    groupNames.add(group.name);
    checkList(group.accept, ['groups', groupIndex]);
    group.items?.forEach((item, itemIndex) => {
      const base = ['groups', groupIndex, 'items', itemIndex];
      if (itemIds.has(item.id)) problems.push({ path: [...base, 'id'], message: `duplicate item id "${item.id}"` });
      if (item.system !== undefined && !item.turns)
        problems.push({ path: [...base, 'system'], message: 'system is for conversations (items with "turns"); put it in "messages"' });
      if (group.session?.history === 'reference')
        item.turns?.forEach((turn, turnIndex) => {
          if (turn.reference === undefined)
            problems.push({
              path: [...base, 'turns', turnIndex],
              message: 'the session history is "reference": every turn needs its "reference" answer',
            });
        });
      itemIds.add(item.id);
      checkList(item.accept, base);
      problems.push(...toolProblems(item, [...(group.accept ?? []), ...(item.accept ?? [])], base, ajv));
      if (item.images && !item.messages?.some((message) => message.role === 'user'))
        problems.push({
          path: [...base, 'images'],
          message: 'images are shown with a user message: put them on a chat item whose "messages" hold one',
        });
      // llama-server keeps the last scale an id is given: one named twice is a slip, not a choice.
      item.lora?.forEach((choice, place) => {
        if (item.lora!.findIndex((other) => other.id === choice.id) < place)
          problems.push({ path: [...base, 'lora', place, 'id'], message: `adapter ${choice.id} is named twice in this item's lora` });
      });
      const schema = item.response_format?.json_schema?.schema;
      if (schema) {
        const problem = jsonSchemaProblem(ajv, schema);
        if (problem) problems.push({ path: [...base, 'response_format', 'json_schema', 'schema'], message: problem });
      }
    });
  });
  return problems;
}

/**
 * What the schema cannot say about an item's tools: they go with a chat request (messages), each
 * name once, each parameters schema compiles within bounds, and tool_choice and tool_call checks
 * name a declared function.
 */
function toolProblems(
  item: WorkloadItemDef,
  checks: readonly AcceptanceCheck[],
  base: (string | number)[],
  ajv: () => Ajv,
): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const names = new Set<string>();
  item.tools?.forEach((tool, index) => {
    if (names.has(tool.function.name))
      problems.push({ path: [...base, 'tools', index, 'function', 'name'], message: `duplicate function "${tool.function.name}"` });
    names.add(tool.function.name);
    if (tool.function.parameters) {
      const problem = jsonSchemaProblem(ajv, tool.function.parameters);
      if (problem) problems.push({ path: [...base, 'tools', index, 'function', 'parameters'], message: problem });
    }
  });
  if (item.tools && !item.messages)
    problems.push({
      path: [...base, 'tools'],
      message: item.turns
        ? 'tools are for single chat requests; a conversation with function calls is not supported yet'
        : 'tools need a chat request: give the item "messages" instead of "prompt"',
    });
  if (item.tool_choice !== undefined && !item.tools)
    problems.push({ path: [...base, 'tool_choice'], message: 'tool_choice needs "tools" on the same item' });
  if (item.tool_results !== undefined && !item.tools)
    problems.push({ path: [...base, 'tool_results'], message: 'tool_results are given back to calls: the item needs "tools"' });
  for (const name of Object.keys(item.tool_results ?? {}))
    if (item.tools && !names.has(name))
      problems.push({ path: [...base, 'tool_results', name], message: `"${name}" is not one of the item's tools` });
  if (item.max_steps !== undefined && item.tool_results === undefined)
    problems.push({ path: [...base, 'max_steps'], message: 'max_steps is for agent exchanges: give the item "tool_results"' });
  const chosen = typeof item.tool_choice === 'object' ? item.tool_choice.function.name : null;
  if (chosen !== null && item.tools && !names.has(chosen))
    problems.push({ path: [...base, 'tool_choice', 'function', 'name'], message: `"${chosen}" is not one of the item's tools` });
  for (const check of checks)
    if ('tool_call' in check && !names.has(check.tool_call))
      problems.push({
        path: [...base, 'accept'],
        message: item.tools
          ? `the tool_call check names "${check.tool_call}", which is not one of the item's tools`
          : `the tool_call check needs "tools" on the item (it names "${check.tool_call}")`,
      });
  return problems;
}

/** The fields of an item that shape a generated answer: an embeddings or reranking request has none to shape. */
const GENERATION_FIELDS = [
  'max_tokens',
  'temperature',
  'top_p',
  'seed',
  'stop',
  'ignore_eos',
  'response_format',
  'tools',
  'tool_choice',
  'lora',
  'images',
  'tool_results',
  'max_steps',
  'accept',
] as const;

const SERVES_WORDS = {
  embeddings: { noun: 'embeddings', request: 'an embeddings request', workload: 'an embeddings workload' },
  rerank: { noun: 'reranking', request: 'a reranking request', workload: 'a reranking workload' },
} as const;
const SERVES_FIELD = { embeddings: '"input"', rerank: '"query" and "documents"' } as const;

/**
 * A workload of embeddings or reranking asks for that alone: its server is started for it, and
 * its figures (inputs/s, latency per request) mean nothing beside a chat request's TTFT. Nothing
 * in it is judged, so generation fields and checks are refused rather than silently ignored.
 */
function vectorProblems(def: WorkloadDef): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  def.groups.forEach((group, groupIndex) =>
    group.items?.forEach((item, itemIndex) => {
      if ((item.query === undefined) !== (item.documents === undefined))
        problems.push({
          path: ['groups', groupIndex, 'items', itemIndex, item.query === undefined ? 'documents' : 'query'],
          message: 'a reranking item needs both "query" and "documents"',
        });
    }),
  );
  const serves = workloadServes(def);
  if (serves !== 'embeddings' && serves !== 'rerank') return problems;
  const { noun, request, workload } = SERVES_WORDS[serves];
  const first = def.groups.find((group) => groupServes(group) === serves)!;
  const only = `a workload with ${noun} (group "${first.name}") is ${noun} only`;
  def.groups.forEach((group, groupIndex) => {
    const base = ['groups', groupIndex];
    if (group.accept) problems.push({ path: [...base, 'accept'], message: `${request} has no answer to check` });
    if (group.generate && !(serves === 'embeddings' && 'embeddings' in group.generate))
      problems.push({ path: [...base, 'generate'], message: `${only}: put generated prompts in a workload of their own` });
    group.items?.forEach((item, itemIndex) => {
      const kind = item.input !== undefined ? 'embeddings' : item.query !== undefined ? 'rerank' : 'generation';
      if (kind !== serves) {
        problems.push({
          path: [...base, 'items', itemIndex],
          message: `${only}: give this item ${SERVES_FIELD[serves]}, or move it to a workload of its own`,
        });
        return;
      }
      for (const field of GENERATION_FIELDS)
        if (item[field] !== undefined)
          problems.push({ path: [...base, 'items', itemIndex, field], message: `${field} does not apply to ${request}` });
    });
  });
  if (def.defaults && Object.keys(def.defaults).length > 0)
    problems.push({ path: ['defaults'], message: `defaults set generation fields, which do not apply to ${workload}` });
  return problems;
}

/** The YAML (or JSON) document of a workload, or its refusal with every syntax problem located. */
function workloadDocument(text: string, file: string, counter: LineCounter): Document.Parsed {
  let parsed: ReturnType<typeof parseYaml>;
  try {
    parsed = parseYaml(text, counter);
  } catch (error) {
    if (!(error instanceof NestingTooDeep)) throw error;
    fail(file, [{ file, ...position(counter, error.offset), field: '', message: error.message }]);
  }
  const { doc, problems } = parsed;
  if (problems.length > 0)
    fail(
      file,
      problems.slice(0, MAX_LISTED_PROBLEMS).map(({ offset, message }) => ({ file, ...position(counter, offset), field: '', message })),
      problems.length,
    );
  if (!isMap(doc.contents))
    fail(file, [{ file, line: 1, column: 1, field: '', message: 'expected a mapping (name, description, groups) at the top level' }]);
  return doc;
}

/** The schema's complaints, one per field and message, the first MAX_LISTED_PROBLEMS located; null when the value is valid. */
function schemaProblems(
  value: unknown,
  doc: Document,
  counter: LineCounter,
  file: string,
): { listed: WorkloadProblem[]; total: number } | null {
  const validate = workloadValidator();
  if (validate(value)) return null;
  const seen = new Set<string>();
  const listed: WorkloadProblem[] = [];
  for (const error of validate.errors ?? []) {
    // oneOf/anyOf also report each failed branch; the summary line says it better.
    if (
      error.keyword === 'not' ||
      (error.schemaPath.includes('/oneOf/') && error.keyword === 'required') ||
      (error.schemaPath.includes('/anyOf/') && error.keyword === 'required')
    )
      continue;
    const described = describeSchemaError(error);
    const key = `${fieldName(described.path)}|${described.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (listed.length < MAX_LISTED_PROBLEMS)
      listed.push({ file, ...locate(doc, counter, described.path), field: fieldName(described.path), message: described.message });
  }
  return { listed, total: seen.size };
}

/**
 * Parses and validates a workload file (YAML or JSON). Every problem is reported with the
 * file, line and column and the field; nothing here runs user-supplied code. It runs on the
 * thread that calls it, for as long as the text takes: text from anywhere goes through
 * `parseWorkloadOffThread`, which bounds that.
 */
export function parseWorkloadText(text: string, file: string): WorkloadDef {
  if (text.trim() === '')
    fail(file, [
      { file, line: null, column: null, field: '', message: 'the file is empty; a workload needs at least "name" and "groups"' },
    ]);
  const counter = new LineCounter();
  const doc = workloadDocument(text, file, counter);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    fail(file, [
      {
        file,
        line: null,
        column: null,
        field: '',
        message: `${(error as Error).message} (aliases are limited to ${MAX_ALIASES} expansions)`,
      },
    ]);
  }
  const invalid = schemaProblems(value, doc, counter, file);
  if (invalid) fail(file, invalid.listed, invalid.total);
  const def = value as WorkloadDef;
  const semantic = semanticProblems(def);
  const overBudget = generatorBudgetProblem(def);
  if (overBudget) semantic.push({ path: ['groups', overBudget.groupIndex, 'generate'], message: overBudget.message });
  if (semantic.length > 0)
    fail(
      file,
      semantic.slice(0, MAX_LISTED_PROBLEMS).map((problem) => ({
        file,
        ...locate(doc, counter, problem.path),
        field: fieldName(problem.path),
        message: problem.message,
      })),
      semantic.length,
    );
  return def;
}

/** A workload file's bytes as text: refused when they are binary or not UTF-8; a byte-order mark is dropped. */
export function decodeWorkloadBytes(bytes: Uint8Array, file: string): string {
  if (bytes.includes(0))
    fail(file, [{ file, line: null, column: null, field: '', message: 'contains NUL bytes: this is a binary file, not YAML or JSON' }]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    fail(file, [{ file, line: null, column: null, field: '', message: 'is not valid UTF-8; save it as UTF-8' }]);
  }
  return text.replace(/^\uFEFF/, '');
}

export { MAX_WORKLOAD_FILE_BYTES, readWorkloadFile, traceWorkload } from './read-workload';
/** Built-in workload names resolve to resources/workloads/NAME.yaml. */
export { builtinWorkloadDir, listBuiltinWorkloads, workloadPath } from './workload-files';
