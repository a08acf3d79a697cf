import type { StreamedCompletion } from '../client/stream-client';
import type { ExchangeMessage, ResolvedAgent, ResolvedItem } from '../workload/workload-types';
import { requestFor } from './request-plan';
import type { SendOne } from './send-one';
import { drawThinkTime, pauseUntil } from './think-time';

/** The result given back for a function the workload scripted no result for: the model is told, as an application would tell it. */
const UNSCRIPTED = (name: string) => JSON.stringify({ error: `no result for ${name}` });

/** The assistant's turn as the next request carries it: its text, and each call with the id the server gave it (or one made up). */
function answerMessages(completion: StreamedCompletion, step: number, agent: ResolvedAgent): ExchangeMessage[] {
  const calls = completion.toolCalls.map((call, index) => ({
    id: call.id ?? `call_${step}_${index}`,
    type: 'function' as const,
    function: { name: call.name, arguments: call.arguments },
  }));
  return [
    { role: 'assistant', content: completion.text || null, tool_calls: calls },
    ...calls.map((call) => ({
      role: 'tool' as const,
      tool_call_id: call.id,
      content: Object.hasOwn(agent.tool_results, call.function.name)
        ? agent.tool_results[call.function.name]!
        : UNSCRIPTED(call.function.name),
    })),
  ];
}

/**
 * One agent exchange: the item's messages with its tools; each answer that calls functions gets
 * the calls back with their scripted results, and the model is asked again after the think time,
 * until it answers without a call, a step fails, or `max_steps` requests were sent. Each step is
 * a request of its own (stored with its step as the turn), so each is timed and judged; the
 * exchange's own time runs from the first step's send to the last one's end.
 */
export async function runAgentExchange(
  run: { sendOne: SendOne; halt: AbortSignal; thinkRandom: () => number },
  session: number,
  item: ResolvedItem,
  agent: ResolvedAgent,
  warmup: boolean,
  scheduledAt: number | null,
): Promise<boolean> {
  const messages: ExchangeMessage[] = [...(item.messages ?? [])];
  let due = scheduledAt;
  for (let step = 1; step <= agent.max_steps; step++) {
    if (run.halt.aborted) return step > 1;
    // After the first step the model chooses (the server's "auto"): a required call there would never let it answer.
    const request = requestFor({ ...item, messages, prompt: null, tool_choice: step === 1 ? item.tool_choice : undefined });
    const completion = await run.sendOne(item, request, warmup, due, { session, turn: step });
    if (completion === null) return step > 1;
    if (completion.error || completion.toolCalls.length === 0 || step === agent.max_steps) return true;
    messages.push(...answerMessages(completion, step, agent));
    const thinkMs = drawThinkTime(agent.think_time, run.thinkRandom);
    const answeredAt = completion.endAt ?? performance.now();
    await pauseUntil(answeredAt + thinkMs, run.halt);
    due = scheduledAt === null ? null : answeredAt + thinkMs;
  }
  return true;
}
