import { Ajv, type ValidateFunction } from 'ajv';
import type { AcceptanceCheck } from './workload-types';

export interface CheckResult {
  check: string;
  /** null: the check could not be evaluated (e.g. no reference output). */
  passed: boolean | null;
  detail?: string;
}

export interface AcceptanceResult {
  /** null when there were no checks that could be evaluated. */
  accepted: boolean | null;
  results: CheckResult[];
}

const ajv = new Ajv({ strict: false, allErrors: false });
const compiledSchemas = new WeakMap<object, ValidateFunction>();
const compiledPatterns = new Map<string, RegExp>();

function schemaValidator(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiledSchemas.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiledSchemas.set(schema, validate);
  }
  return validate;
}

function pattern(source: string): RegExp {
  let compiled = compiledPatterns.get(source);
  if (!compiled) {
    compiled = new RegExp(source, 'u');
    compiledPatterns.set(source, compiled);
  }
  return compiled;
}

/** JSON in the output, allowing a fenced ```json block around it. */
function extractJson(output: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(output);
  return JSON.parse((fenced ? fenced[1]! : output).trim());
}

/**
 * Judges one output against checks decided before the run. Pure data comparisons: no
 * check evaluates user-supplied code.
 */
export function evaluateAcceptance(checks: readonly AcceptanceCheck[], output: string, reference: string | null): AcceptanceResult {
  const results: CheckResult[] = checks.map((check) => {
    if ('contains' in check) return { check: 'contains', passed: output.includes(check.contains) };
    if ('regex' in check) return { check: 'regex', passed: pattern(check.regex).test(output) };
    if ('exact' in check) return { check: 'exact', passed: output.trim() === check.exact.trim() };
    if ('max_length' in check) return { check: 'max_length', passed: output.length <= check.max_length, detail: `${output.length} chars` };
    if ('equals_reference' in check) {
      if (reference === null) return { check: 'equals_reference', passed: null, detail: 'no reference output for this item' };
      return { check: 'equals_reference', passed: output === reference };
    }
    let value: unknown;
    try {
      value = extractJson(output);
    } catch (error) {
      return { check: 'json_schema', passed: false, detail: `not JSON: ${(error as Error).message}` };
    }
    const validate = schemaValidator(check.json_schema);
    const passed = validate(value) as boolean;
    return { check: 'json_schema', passed, detail: passed ? undefined : ajv.errorsText(validate.errors) };
  });
  const evaluated = results.filter((result) => result.passed !== null);
  return { accepted: evaluated.length === 0 ? null : evaluated.every((result) => result.passed), results };
}
