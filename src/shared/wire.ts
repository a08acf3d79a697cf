import { EVENT_NAMES, type EventName, type RpcRequest, type RpcResponse } from './contract';
import { ErrorCode } from './errors';

/**
 * The browser transport's frames, for both ends: a request `{id, service, method, args}` is
 * answered by `{id, ...response}`; a subscription `{id, subscribe: [names]}` replaces the set of
 * events this connection receives (none until it asks) and is answered like a request; events
 * are pushed as `{event, payload}`.
 */
export type WireRequest = RpcRequest & { id: number };

export type ClientFrame =
  | { kind: 'request'; id: unknown; request: unknown }
  | { kind: 'subscribe'; id: unknown; names: EventName[] }
  | { kind: 'refused'; id: unknown; response: RpcResponse };

export type ServerFrame = { kind: 'reply'; id: number; response: RpcResponse } | { kind: 'event'; name: string; payload: unknown };

export const encodeRequest = (request: WireRequest): string => JSON.stringify(request);

export const encodeReply = (id: unknown, response: RpcResponse): string => JSON.stringify({ id, ...response });

export const encodeSubscription = (id: number, names: readonly EventName[]): string => JSON.stringify({ id, subscribe: names });

export const encodeEvent = (name: string, payload: unknown): string => JSON.stringify({ event: name, payload });

/**
 * A frame from a client: a request (its id to answer by, and the request, which the dispatcher
 * checks), a subscription, or a subscription refused with the reply that says why (not a list of
 * known event names). Throws on text that is not JSON.
 */
export function decodeClientFrame(text: string): ClientFrame {
  const frame = JSON.parse(text) as { id?: unknown; subscribe?: unknown } | null;
  if (frame === null) throw new Error('a null frame');
  const id = frame.id ?? null;
  if (typeof frame !== 'object' || !('subscribe' in frame)) return { kind: 'request', id, request: frame };
  const names = frame.subscribe;
  const refuse = (message: string): ClientFrame => ({
    kind: 'refused',
    id,
    response: { ok: false, error: { code: ErrorCode.InvalidInput, message } },
  });
  if (!Array.isArray(names)) return refuse(`subscribe takes a list of event names: ${EVENT_NAMES.join(', ')}`);
  const unknown = names.filter((name) => !EVENT_NAMES.includes(name as EventName));
  if (unknown.length > 0)
    return refuse(`no such event: ${unknown.map((name) => JSON.stringify(name)).join(', ')}; the events are ${EVENT_NAMES.join(', ')}`);
  return { kind: 'subscribe', id, names: names as EventName[] };
}

/** What a frame that is not a request gets back. */
export const MALFORMED_REQUEST: RpcResponse = {
  ok: false,
  error: {
    code: ErrorCode.InvalidInput,
    message: 'messages must be JSON objects: {id, service, method, args}, or {id, subscribe: [event names]}',
  },
};

/** A frame from the server, or null for one that is neither a reply nor an event. */
export function decodeServerFrame(text: string): ServerFrame | null {
  const data = JSON.parse(text) as { id?: unknown; event?: unknown; payload?: unknown } & RpcResponse;
  if (typeof data.event === 'string') return { kind: 'event', name: data.event, payload: data.payload };
  if (typeof data.id !== 'number') return null;
  const { id, ...response } = data;
  return { kind: 'reply', id, response: response as RpcResponse };
}
