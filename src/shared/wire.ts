import type { RpcRequest, RpcResponse } from './contract';
import { ErrorCode } from './errors';

/**
 * The browser transport's frames, for both ends: a request `{id, service, method, args}` is
 * answered by `{id, ...response}`, and events are pushed as `{event, payload}`.
 */
export type WireRequest = RpcRequest & { id: number };

export type ServerFrame = { kind: 'reply'; id: number; response: RpcResponse } | { kind: 'event'; name: string; payload: unknown };

export const encodeRequest = (request: WireRequest): string => JSON.stringify(request);

export const encodeReply = (id: unknown, response: RpcResponse): string => JSON.stringify({ id, ...response });

export const encodeEvent = (name: string, payload: unknown): string => JSON.stringify({ event: name, payload });

/** A frame from a client: its id (to answer by) and the request, which the dispatcher checks; throws on text that is not JSON. */
export function decodeClientFrame(text: string): { id: unknown; request: unknown } {
  const request = JSON.parse(text) as { id?: unknown } | null;
  if (request === null) throw new Error('a null frame');
  return { id: request.id ?? null, request };
}

/** What a frame that is not a request gets back. */
export const MALFORMED_REQUEST: RpcResponse = {
  ok: false,
  error: { code: ErrorCode.InvalidInput, message: 'messages must be JSON objects {id, service, method, args}' },
};

/** A frame from the server, or null for one that is neither a reply nor an event. */
export function decodeServerFrame(text: string): ServerFrame | null {
  const data = JSON.parse(text) as { id?: unknown; event?: unknown; payload?: unknown } & RpcResponse;
  if (typeof data.event === 'string') return { kind: 'event', name: data.event, payload: data.payload };
  if (typeof data.id !== 'number') return null;
  const { id, ...response } = data;
  return { kind: 'reply', id, response: response as RpcResponse };
}
