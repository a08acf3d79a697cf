import fs from 'node:fs';
import path from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { isMap, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { pathExists } from '../core/exists';
import { projectRoot } from '../core/paths';
import { readFileCapped } from '../core/read-capped';
import { generatorBudgetProblem } from './generators';
import type { AcceptanceCheck, WorkloadDef } from './workload-types';

export const MAX_WORKLOAD_FILE_BYTES = 64 * 1024 * 1024;
const MAX_ALIASES = 100;

let validator: ReturnType<Ajv['compile']> | null = null;
function schemaValidator() {
  if (!validator) {
    const schema = JSON.parse(fs.readFileSync(path.join(projectRoot(), 'resources', 'workload.schema.json'), 'utf8')) as object;
    validator = new Ajv({ allErrors: true, strict: false }).compile(schema);
  }
  return validator;
}

export interface WorkloadProblem {
  file: string;
  line: number | null;
  column: number | null;
  field: string;
  message: string;
}

function fail(file: string, problems: WorkloadProblem[]): never {
  const lines = problems
    .slice(0, 20)
    .map(
      (problem) =>
        `${problem.file}${problem.line !== null ? `:${problem.line}:${problem.column}` : ''}: ${problem.field ? `${problem.field}: ` : ''}${problem.message}`,
    );
  if (problems.length > 20) lines.push(`… and ${problems.length - 20} more`);
  throw new AppError(ErrorCode.InvalidInput, `Invalid workload ${file}:\n${lines.join('\n')}`, { problems });
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
      return { path: base, message: 'must have exactly one of "messages", "prompt" or "turns"' };
    case 'anyOf':
      return { path: base, message: 'must have "items" or "generate"' };
    default:
      return { path: base, message: error.message ?? error.keyword };
  }
}

/** Checks the schema cannot express: patterns compile, JSON schemas compile, ids are unique. */
function semanticProblems(def: WorkloadDef): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const ajv = new Ajv({ strict: false });
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
        try {
          ajv.compile(check.json_schema);
        } catch (error) {
          problems.push({
            path: [...base, 'accept', index, 'json_schema'],
            message: `not a valid JSON Schema: ${(error as Error).message}`,
          });
        }
      }
    });
  };
  const groupNames = new Set<string>();
  const itemIds = new Set<string>();
  def.groups.forEach((group, groupIndex) => {
    const conversations = (group.items ?? []).some((item) => item.turns) || (group.generate && 'conversations' in group.generate);
    if (group.session && !conversations)
      problems.push({
        path: ['groups', groupIndex, 'session'],
        message: 'session applies to conversations: give items "turns" or use the conversations generator',
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
      const schema = item.response_format?.json_schema?.schema;
      if (schema) {
        try {
          ajv.compile(schema);
        } catch (error) {
          problems.push({
            path: [...base, 'response_format', 'json_schema', 'schema'],
            message: `not a valid JSON Schema: ${(error as Error).message}`,
          });
        }
      }
    });
  });
  return problems;
}

/**
 * Parses and validates a workload file (YAML or JSON). Every problem is reported with the
 * file, line and column and the field; nothing here runs user-supplied code.
 */
export function parseWorkloadText(text: string, file: string): WorkloadDef {
  if (text.trim() === '')
    fail(file, [
      { file, line: null, column: null, field: '', message: 'the file is empty; a workload needs at least "name" and "groups"' },
    ]);
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: true, strict: true });
  if (doc.errors.length > 0) {
    fail(
      file,
      doc.errors.map((error) => ({
        file,
        line: error.linePos?.[0].line ?? null,
        column: error.linePos?.[0].col ?? null,
        field: '',
        message: error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, ''),
      })),
    );
  }
  if (!isMap(doc.contents))
    fail(file, [{ file, line: 1, column: 1, field: '', message: 'expected a mapping (name, description, groups) at the top level' }]);
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
  const validate = schemaValidator();
  if (!validate(value)) {
    const seen = new Set<string>();
    const problems: WorkloadProblem[] = [];
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
      problems.push({ file, ...locate(doc, counter, described.path), field: fieldName(described.path), message: described.message });
    }
    fail(file, problems);
  }
  const def = value as WorkloadDef;
  const semantic = semanticProblems(def);
  const overBudget = generatorBudgetProblem(def);
  if (overBudget) semantic.push({ path: ['groups', overBudget.groupIndex, 'generate'], message: overBudget.message });
  if (semantic.length > 0)
    fail(
      file,
      semantic.map((problem) => ({
        file,
        ...locate(doc, counter, problem.path),
        field: fieldName(problem.path),
        message: problem.message,
      })),
    );
  return def;
}

export async function readWorkloadFile(file: string): Promise<WorkloadDef> {
  if (file.toLowerCase().endsWith('.jsonl')) return traceWorkload(file);
  const bytes = await readFileCapped(file, 'workload file', MAX_WORKLOAD_FILE_BYTES);
  if (bytes.includes(0))
    fail(file, [{ file, line: null, column: null, field: '', message: 'contains NUL bytes: this is a binary file, not YAML or JSON' }]);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    fail(file, [{ file, line: null, column: null, field: '', message: 'is not valid UTF-8; save it as UTF-8' }]);
  }
  return parseWorkloadText(text.replace(/^\uFEFF/, ''), file);
}

/**
 * A trace file (JSON Lines) given where a workload is expected: a workload of one group that
 * replays it. Its lines are read and checked when the workload is resolved.
 */
export async function traceWorkload(file: string): Promise<WorkloadDef> {
  if (!(await pathExists(file))) throw new AppError(ErrorCode.NotFound, `Trace file not found: ${file}`);
  const stem = path
    .basename(file)
    .replace(/\.jsonl$/i, '')
    .replace(/[^\w.-]/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '');
  return {
    name: `trace-${stem || 'file'}`.slice(0, 64),
    description: `Replay of the trace ${path.basename(file)} at its own timing`,
    groups: [{ name: 'trace', generate: { trace: { file: path.basename(file) } } }],
  };
}

/** Built-in workload names resolve to resources/workloads/NAME.yaml. */
export { builtinWorkloadDir, listBuiltinWorkloads, workloadPath } from './workload-files';
