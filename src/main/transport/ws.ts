import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Emitter } from '../core/emitter';
import type { RpcDispatcher } from '../rpc/dispatcher';
import type { AppEvent } from '../services';

const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The browser transport: requests `{id, service, method, args}` answered by `{id, ...response}`,
 * events pushed as `{event, payload}`. Who may connect is decided before the upgrade.
 */
export function createWebSocketTransport(dispatcher: RpcDispatcher, events: Emitter<AppEvent>): { server: WebSocketServer; close(): void } {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const clients = new Set<WebSocket>();
  const unsubscribe = events.on((event) => {
    const message = JSON.stringify({ event: event.name, payload: event.payload });
    for (const client of clients) if (client.readyState === client.OPEN) client.send(message);
  });
  server.on('connection', (socket: WebSocket, _request: IncomingMessage) => {
    clients.add(socket);
    socket.on('close', () => clients.delete(socket));
    socket.on('message', async (data) => {
      let id: unknown = null;
      try {
        const message = JSON.parse(data.toString()) as { id?: unknown };
        id = message.id ?? null;
        const response = await dispatcher.dispatch(message);
        socket.send(JSON.stringify({ id, ...response }));
      } catch {
        socket.send(JSON.stringify({ id, ok: false, error: { code: 'invalid_input', message: 'messages must be JSON objects {id, service, method, args}' } }));
      }
    });
  });
  return {
    server,
    close() {
      unsubscribe();
      for (const client of clients) client.terminate();
      server.close();
    },
  };
}
