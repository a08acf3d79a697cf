import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as AjvModule from 'ajv';
import type { Ajv as AjvClass, Options, ValidateFunction } from 'ajv';
import { projectRoot } from '../core/paths';

/**
 * The workload schema's validator. Compiling the schema costs a parser thread about a tenth of a
 * second at every start, before it can answer, and each CLI run waits on that thread; so the app's
 * build compiles it once into workload-validator.mjs beside the thread's entry
 * (workload-validator-source.ts), which a thread loads instead where the schema it was built from
 * is today's. A source checkout, or a build older than the schema, compiles it here.
 */
export const PREBUILT_VALIDATOR_FILE = 'workload-validator.mjs';

export function workloadSchemaText(): string {
  return fs.readFileSync(path.join(projectRoot(), 'resources', 'workload.schema.json'), 'utf8');
}

export function workloadSchemaDigest(schemaText: string): string {
  return createHash('sha256').update(schemaText).digest('hex');
}

/**
 * The workload schema with every `$ref` replaced by its definition. Ajv calls a referenced
 * definition as a function of its own and joins the errors it returns onto the list so far with
 * `concat`, so N invalid items cost time in N²; inlined, each error is pushed once. The schema
 * has no recursive definition.
 */
export function inlineDefinitions(schema: { definitions?: Record<string, unknown> }): object {
  const { definitions = {}, ...rest } = schema;
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (node === null || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/definitions/')) return inline(definitions[ref.slice('#/definitions/'.length)]);
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value)]));
  };
  return inline(rest) as object;
}

/** The options the workload schema is compiled with, here and in the build. */
export const WORKLOAD_SCHEMA_OPTIONS: Options = { allErrors: true, strict: false };

/**
 * Ajv, loaded when first needed: a thread that validates with the prebuilt validator and meets no
 * JSON Schema in the workload never loads it.
 */
export function newAjv(options: Options): AjvClass {
  const { Ajv } = createRequire(import.meta.url)('ajv') as typeof AjvModule;
  return new Ajv(options);
}

let validator: ValidateFunction | null = null;

/** The validator this thread uses: the prebuilt one where it was loaded, else compiled now from the schema. */
export function workloadValidator(): ValidateFunction {
  if (!validator) {
    const schema = JSON.parse(workloadSchemaText()) as { definitions?: Record<string, unknown> };
    validator = newAjv(WORKLOAD_SCHEMA_OPTIONS).compile(inlineDefinitions(schema));
  }
  return validator;
}

/** Makes `validate` this thread's workload validator (a parser thread's, with the build's). */
export function useWorkloadValidator(validate: ValidateFunction): void {
  validator = validate;
}

/**
 * The build's validator from beside `entryUrl` (a parser thread's own module), where it exists
 * and was built from today's schema; null otherwise (a source checkout has none).
 */
export async function loadPrebuiltWorkloadValidator(entryUrl: string): Promise<ValidateFunction | null> {
  if (!entryUrl.startsWith('file:') || entryUrl.endsWith('.ts')) return null;
  const file = path.join(path.dirname(fileURLToPath(entryUrl)), PREBUILT_VALIDATOR_FILE);
  if (!fs.existsSync(file)) return null;
  const prebuilt = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as { schemaDigest: string; validate: ValidateFunction };
  return prebuilt.schemaDigest === workloadSchemaDigest(workloadSchemaText()) ? prebuilt.validate : null;
}
