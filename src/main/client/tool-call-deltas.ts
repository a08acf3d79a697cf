/** One function call as it was assembled from a stream's `delta.tool_calls` pieces. */
export interface StreamedToolCall {
  /** The call's slot in the answer (the delta's `index`). */
  index: number;
  id: string | null;
  name: string;
  /** The argument text as streamed, concatenated; parsing it is the judge's job. */
  arguments: string;
  /** Arrival of the first and the last piece of this call, on the client's clock. */
  firstAt: number;
  lastAt: number;
}

const MAX_CALLS = 128;
const MAX_ARGUMENT_CHARS = 1 << 20;

/**
 * Folds one chunk's `delta.tool_calls` into `calls`. Servers differ in how they stream a call:
 * llama.cpp and OpenAI send the name once and then argument pieces under the same index; SGLang
 * repeats an empty name and the id; some gateways give every piece a new id under the same index;
 * Ollama sends the whole call in one piece. So a call is keyed by its index (by its id where a
 * server sends no index), its name is the first non-empty one (never concatenated), and argument
 * pieces are appended. Returns whether the chunk carried any piece of a call. Fields of the wrong
 * type are ignored, and a piece whose index cannot be a slot is dropped: an endpoint is not trusted.
 */
export function foldToolCallDeltas(calls: StreamedToolCall[], pieces: unknown, arrived: number): boolean {
  if (!Array.isArray(pieces)) return false;
  let carried = false;
  for (const piece of pieces) {
    if (typeof piece !== 'object' || piece === null) continue;
    const { index, id, function: fn } = piece as { index?: unknown; id?: unknown; function?: unknown };
    const idText = typeof id === 'string' && id !== '' ? id : null;
    const { name, arguments: args } = (typeof fn === 'object' && fn !== null ? fn : {}) as { name?: unknown; arguments?: unknown };
    const call = callFor(calls, index, idText, arrived);
    if (!call) continue;
    carried = true;
    call.lastAt = arrived;
    if (call.id === null && idText !== null) call.id = idText;
    if (call.name === '' && typeof name === 'string') call.name = name.slice(0, 256);
    if (typeof args === 'string' && call.arguments.length < MAX_ARGUMENT_CHARS)
      call.arguments += args.slice(0, MAX_ARGUMENT_CHARS - call.arguments.length);
    // A server that sends the arguments as an object rather than text (seen in non-streaming shapes).
    else if (typeof args === 'object' && args !== null && call.arguments === '')
      call.arguments = JSON.stringify(args).slice(0, MAX_ARGUMENT_CHARS);
  }
  return carried;
}

function callFor(calls: StreamedToolCall[], index: unknown, id: string | null, arrived: number): StreamedToolCall | null {
  // An index that is there but cannot be a call's slot is a broken piece: placing it anywhere would corrupt a call.
  if (index !== undefined && index !== null && !(typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < MAX_CALLS))
    return null;
  const slot = typeof index === 'number' ? index : null;
  let call =
    slot !== null
      ? calls.find((candidate) => candidate.index === slot)
      : (calls.find((candidate) => id !== null && candidate.id === id) ?? (id === null ? calls[calls.length - 1] : undefined));
  if (call) return call;
  if (calls.length >= MAX_CALLS) return null;
  call = { index: slot ?? calls.length, id, name: '', arguments: '', firstAt: arrived, lastAt: arrived };
  calls.push(call);
  return call;
}
