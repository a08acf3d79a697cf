import type { Distribution, ToolCallSummary } from './contract/runs';

const ms = (distribution: Distribution) => (distribution.p50 === null ? '—' : `${distribution.p50.toFixed(1)} ms`);

/** A function-calling run's calls in one line, for the CLI summary and the Run view: how many answers called, how many calls were valid, and when. */
export function toolCallsLine(calls: ToolCallSummary): string {
  const head = `tool calls: ${calls.requests_with_calls} of ${calls.requests} answers called a function`;
  const exchanges = calls.exchanges
    ? `; ${calls.exchanges.count} agent exchange${calls.exchanges.count === 1 ? '' : 's'}, ${calls.exchanges.answered} answered, steps mean ${calls.exchanges.steps.mean?.toFixed(1) ?? '—'}, exchange p50 ${ms(calls.exchanges.e2e_ms)}`
    : '';
  if (calls.calls === 0) return `${head}; none called, so no call was timed or judged${exchanges}`;
  const share = calls.valid_share === null ? '—' : `${(calls.valid_share * 100).toFixed(1)} %`;
  const tokens =
    calls.argument_tokens.n === 0 ? 'argument tokens not counted' : `${calls.argument_tokens.mean!.toFixed(1)} argument tokens mean`;
  return `${head}; ${calls.valid_calls} of ${calls.calls} calls valid (${share}); first call chunk p50 ${ms(calls.ttfc_ms)}, calls complete p50 ${ms(calls.tool_call_ms)}; ${tokens}${exchanges}`;
}
