import type { EventName, RpcResponse } from '../../../shared/contract';
import type { RpcBridge } from './client';
import { ErrorCode } from '../../../shared/errors';
import { NO_TOKEN_MESSAGE } from '../../../shared/serve-access';
import { decodeServerFrame, encodeRequest, encodeSubscription } from '../../../shared/wire';

const TOKEN_KEY = 'inferlab-token';

/**
 * The access token: taken from the address the server printed, kept in this tab's
 * sessionStorage (scoped to this origin, port included, unlike a cookie) and removed from the
 * address bar and history. Null when the page was opened without it.
 */
export function takeAccessToken(location: Location = window.location, storage: Storage = window.sessionStorage): string | null {
  const params = new URLSearchParams(location.search);
  const given = params.get('token');
  if (given) {
    storage.setItem(TOKEN_KEY, given);
    params.delete('token');
    const query = params.toString();
    window.history.replaceState(window.history.state, '', `${location.pathname}${query ? `?${query}` : ''}${location.hash}`);
    return given;
  }
  return storage.getItem(TOKEN_KEY);
}

/**
 * The browser's bridge: one WebSocket to `/rpc` on the page's own origin (frames in
 * shared/wire.ts), requests matched to answers by id, events subscribed to by name and fanned out
 * to their listeners. Reconnects when the socket drops.
 */
export function webSocketBridge(location: Location = window.location): RpcBridge {
  const token = takeAccessToken(location);
  if (!token) {
    // Without the token every call would be refused: say what to do instead of retrying forever.
    return {
      call: async () => ({ ok: false, error: { code: ErrorCode.Forbidden, message: NO_TOKEN_MESSAGE } }),
      on: () => () => {},
    };
  }
  const listeners = new Map<EventName, Set<(payload: unknown) => void>>();
  const pending = new Map<number, (response: RpcResponse) => void>();
  let nextId = 1;
  let socket: WebSocket;
  let opened: Promise<void>;
  let subscriptionQueued = false;

  // The server sends only what this connection subscribed to: the names with listeners, sent
  // whole (once per change, after the current task) and again on every reconnection.
  const sendSubscription = () => {
    subscriptionQueued = false;
    if (socket.readyState === WebSocket.OPEN) socket.send(encodeSubscription(nextId++, [...listeners.keys()]));
  };
  const subscriptionChanged = () => {
    if (subscriptionQueued) return;
    subscriptionQueued = true;
    queueMicrotask(sendSubscription);
  };

  const connect = () => {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    socket = new WebSocket(`${scheme}://${location.host}/rpc?token=${encodeURIComponent(token)}`);
    opened = new Promise((resolve, reject) => {
      socket.addEventListener(
        'open',
        () => {
          sendSubscription();
          resolve();
        },
        { once: true },
      );
      socket.addEventListener('error', () => reject(new Error('Cannot connect to the Infer Lab server')), { once: true });
    });
    // Deliberate: every call awaits `opened`, so the failure reaches each caller and its view; this only
    // keeps a failed connection that no call is waiting on from being an unhandled rejection.
    // eslint-disable-next-line no-restricted-syntax -- the error is not dropped, see above
    opened.catch(() => {});
    socket.addEventListener('message', (message) => {
      const frame = decodeServerFrame(String(message.data));
      if (frame?.kind === 'event') {
        for (const listener of listeners.get(frame.name as EventName) ?? []) listener(frame.payload);
      } else if (frame?.kind === 'reply') {
        pending.get(frame.id)?.(frame.response);
        pending.delete(frame.id);
      }
    });
    socket.addEventListener('close', () => {
      for (const resolve of pending.values())
        resolve({ ok: false, error: { code: ErrorCode.Internal, message: 'The connection to the Infer Lab server was lost' } });
      pending.clear();
      setTimeout(connect, 1000);
    });
  };
  connect();

  return {
    async call(service, method, args) {
      await opened;
      const id = nextId++;
      return new Promise<RpcResponse>((resolve) => {
        pending.set(id, resolve);
        socket.send(encodeRequest({ id, service, method, args }));
      });
    },
    on(name, listener) {
      const named = listeners.get(name) ?? new Set();
      if (named.size === 0) {
        listeners.set(name, named);
        subscriptionChanged();
      }
      named.add(listener);
      return () => {
        named.delete(listener);
        if (named.size > 0 || listeners.get(name) !== named) return;
        listeners.delete(name);
        subscriptionChanged();
      };
    },
  };
}
