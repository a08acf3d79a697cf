import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { budgetedRegExp, regexBudget } from './regex-budget';
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

export interface AcceptanceOptions {
  /**
   * A private run's: every detail is text-free, saying what failed in the check's own terms and
   * never a key, value or position taken from the output.
   */
  private?: boolean;
}

// Schema `pattern`s are user regexes too: they run under the same time budget.
const ajv = new Ajv({ strict: false, allErrors: false, code: { regExp: budgetedRegExp } });
const compiledSchemas = new WeakMap<object, ValidateFunction>();

/** A user JSON Schema compiled once (its patterns under the regex budget) and kept while the schema object lives. */
export function schemaValidator(schema: Record<string, unknown>): ValidateFunction {
  let validate = compiledSchemas.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiledSchemas.set(schema, validate);
  }
  return validate;
}

type RegexTest = (source: string) => boolean;

/** A regex check's result; over budget (or a pattern that does not compile) it fails with the reason. */
function regexResult(source: string, test: RegexTest): CheckResult {
  try {
    return { check: 'regex', passed: test(source) };
  } catch (error) {
    return { check: 'regex', passed: false, detail: (error as Error).message };
  }
}

/** JSON in the output, allowing a fenced ```json block around it. */
function extractJson(output: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(output);
  return JSON.parse((fenced ? fenced[1]! : output).trim());
}

/**
 * The parser's own message quotes the start of the output, which may be a private run's
 * answer; only where parsing stopped is kept.
 */
function notJsonDetail(error: Error): string {
  if (/end of JSON input|Unterminated/i.test(error.message)) return 'not JSON: the text ends before the JSON does';
  const position = /at position (\d+)/.exec(error.message);
  return position ? `not JSON: parsing stopped at character ${position[1]}` : 'not JSON';
}

/**
 * Why an output failed its schema. Ajv's own text names where in the output it failed
 * (`data/<key>`, the keys being the model's), so a private run's detail is built from the
 * schema's side alone: how many errors and the schema keywords that failed, never the
 * instance path, the params (`additionalProperty`, `propertyName` are the output's keys) or a
 * message. Ajv stops at the first failing keyword, so there is one error or two (propertyNames adds its own).
 */
export function schemaFailureDetail(errors: readonly ErrorObject[] | null | undefined, options: AcceptanceOptions = {}): string {
  if (!options.private) return ajv.errorsText(errors as ErrorObject[] | null | undefined);
  const list = errors ?? [];
  // A keyword is the schema's vocabulary (type, required, additionalProperties); anything else is not named.
  const keywords = [...new Set(list.map((error) => (/^[$A-Za-z]{1,40}$/.test(error.keyword) ? error.keyword : 'other')))];
  const count = `${list.length} ${list.length === 1 ? 'error' : 'errors'}`;
  return `does not match the schema: ${count}${keywords.length ? ` (${keywords.join(', ')})` : ''}`;
}

/** A json_schema check whose output is not JSON: where parsing stopped, which a private run does not keep either. */
function notJsonResult(error: Error, options: AcceptanceOptions): CheckResult {
  return { check: 'json_schema', passed: false, detail: options.private ? 'not JSON' : notJsonDetail(error) };
}

/**
 * Judges one output against checks decided before the run. No check evaluates user-supplied
 * code; user regexes (checks and schema patterns) run on a worker under a time budget, and
 * one over it fails its check with "regex exceeded N ms" while the run goes on.
 */
export function evaluateAcceptance(
  checks: readonly AcceptanceCheck[],
  output: string,
  reference: string | null,
  test: RegexTest = (source) => regexBudget.testSync(source, 'u', output),
  options: AcceptanceOptions = {},
): AcceptanceResult {
  // A tool_call check is judged with the answer's calls (tool-call-judge.ts), not its text.
  const textChecks = checks.filter((check): check is Exclude<AcceptanceCheck, { tool_call: string }> => !('tool_call' in check));
  const results: CheckResult[] = textChecks.map((check) => {
    if ('contains' in check) return { check: 'contains', passed: output.includes(check.contains) };
    if ('regex' in check) return regexResult(check.regex, test);
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
      return notJsonResult(error as Error, options);
    }
    try {
      const validate = schemaValidator(check.json_schema);
      const passed = validate(value) as boolean;
      return { check: 'json_schema', passed, detail: passed ? undefined : schemaFailureDetail(validate.errors, options) };
    } catch (error) {
      // A schema that does not compile or a pattern over its budget: the schema's side, or the budget's.
      return { check: 'json_schema', passed: false, detail: (error as Error).message };
    }
  });
  const evaluated = results.filter((result) => result.passed !== null);
  return { accepted: evaluated.length === 0 ? null : evaluated.every((result) => result.passed), results };
}

/**
 * As `evaluateAcceptance`, with the regex checks run without blocking the event loop, so
 * in-flight requests keep their timings while a slow pattern runs out its budget. (Schema
 * patterns still block, for at most the budget each.)
 */
export async function evaluateAcceptanceAsync(
  checks: readonly AcceptanceCheck[],
  output: string,
  reference: string | null,
  options: AcceptanceOptions = {},
): Promise<AcceptanceResult> {
  const outcomes = new Map<string, boolean | Error>();
  for (const check of checks) {
    if (!('regex' in check) || outcomes.has(check.regex)) continue;
    outcomes.set(check.regex, await regexBudget.test(check.regex, 'u', output).catch((error: Error) => error));
  }
  return evaluateAcceptance(
    checks,
    output,
    reference,
    (source) => {
      const outcome = outcomes.get(source)!;
      if (outcome instanceof Error) throw outcome;
      return outcome;
    },
    options,
  );
}
