import type { AcceptanceResult, CheckResult } from './acceptance';
import { schemaFailureDetail, schemaValidator } from './acceptance';
import type { AcceptanceCheck, ToolChoice, ToolDef } from './workload-types';
import { callArguments, NOT_JSON } from '../../shared/tool-call-arguments';

/** What one answer's function calls came to: counted for the run's figures, and judged as a task. */
export interface ToolCallJudgement {
  calls: number;
  /** Calls that named a declared tool and whose arguments parsed as a JSON object matching its parameters. */
  valid: number;
  argument_chars: number;
  results: CheckResult[];
}

/** A call as the answer made it: the client assembles it from the stream. */
export interface AnswerCall {
  name: string;
  arguments: string;
}

/** Why one call is not a usable call, or null. A private run's reason names nothing the model wrote. */
function callProblem(call: AnswerCall, tools: readonly ToolDef[], privateRun: boolean): string | null {
  const tool = tools.find((candidate) => candidate.function.name === call.name);
  if (!tool)
    return call.name === ''
      ? 'a call without a function name'
      : privateRun
        ? 'a call to an undeclared function'
        : `a call to undeclared "${call.name}"`;
  const args = callArguments(call.arguments);
  if (args === NOT_JSON) return `${tool.function.name}: arguments are not JSON`;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return `${tool.function.name}: arguments are not a JSON object`;
  if (!tool.function.parameters) return null;
  try {
    const validate = schemaValidator(tool.function.parameters);
    if (validate(args)) return null;
    return `${tool.function.name}: ${schemaFailureDetail(validate.errors, { private: privateRun })}`;
  } catch (error) {
    return `${tool.function.name}: ${(error as Error).message}`;
  }
}

/**
 * Judges the calls of one answer to a request that offered tools. Every call must parse and match
 * its tool: a call that does not is a failed task however fast it came. An answer without a call
 * fails only where the request required one (`tool_choice` "required" or a named function). Each
 * `tool_call` check passes when the answer called that function and every call was valid.
 */
export function judgeToolCalls(
  item: { tools?: readonly ToolDef[]; tool_choice?: ToolChoice; checks: readonly AcceptanceCheck[] },
  calls: readonly AnswerCall[],
  options: { private?: boolean } = {},
): ToolCallJudgement {
  const tools = item.tools ?? [];
  const problems = calls.map((call) => callProblem(call, tools, options.private === true));
  const valid = problems.filter((problem) => problem === null).length;
  const listed = problems.filter((problem): problem is string => problem !== null);
  const required = item.tool_choice === 'required' || typeof item.tool_choice === 'object';
  const results: CheckResult[] = [];
  if (calls.length === 0) {
    if (required)
      results.push({ check: 'tool_calls', passed: false, detail: 'no function call in the answer, and the request required one' });
  } else {
    results.push({
      check: 'tool_calls',
      passed: listed.length === 0,
      detail:
        listed.length === 0 ? `${calls.length} valid` : `${listed.length} of ${calls.length} invalid: ${listed.slice(0, 3).join('; ')}`,
    });
  }
  for (const check of item.checks) {
    if (!('tool_call' in check)) continue;
    const called = calls.some((call) => call.name === check.tool_call);
    results.push({
      check: 'tool_call',
      passed: called && listed.length === 0,
      detail: called ? undefined : `no call to ${check.tool_call}`,
    });
  }
  return { calls: calls.length, valid, argument_chars: calls.reduce((sum, call) => sum + call.arguments.length, 0), results };
}

/** The answer's text checks and its calls' judgement as one verdict: accepted when every check that could be evaluated passed. */
export function withToolCallJudgement(text: AcceptanceResult | null, judgement: ToolCallJudgement): AcceptanceResult {
  const results = [...(text?.results ?? []), ...judgement.results];
  const evaluated = results.filter((result) => result.passed !== null);
  return { accepted: evaluated.length === 0 ? null : evaluated.every((result) => result.passed), results };
}
