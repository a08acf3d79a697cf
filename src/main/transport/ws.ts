import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Emitter } from '../core/emitter';
import type { RpcDispatcher } from '../rpc/dispatcher';
import type { AppEvent } from '../services';
import type { EventName } from '../../shared/contract';
import { decodeClientFrame, encodeEvent, encodeReply, MALFORMED_REQUEST } from '../../shared/wire';

const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The browser transport (frames in shared/wire.ts): requests answered by id, and each event
 * pushed only to the clients that subscribed to its name, so a tool that only calls methods is
 * not sent every server log line and telemetry tick. Who may connect is decided before the upgrade.
 */
export function createWebSocketTransport(
  dispatcher: RpcDispatcher,
  events: Emitter<AppEvent>,
  log: (line: string) => void = () => {},
): { server: WebSocketServer; close(): void } {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const reply = (socket: WebSocket, message: string) => {
    if (socket.readyState === socket.OPEN) socket.send(message, (error) => error && log(`serve: reply not sent: ${error.message}`));
  };
  const clients = new Map<WebSocket, ReadonlySet<EventName>>();
  const unsubscribe = events.on((event) => {
    let message: string | undefined;
    for (const [client, names] of clients) if (names.has(event.name)) reply(client, (message ??= encodeEvent(event.name, event.payload)));
  });
  server.on('connection', (socket: WebSocket, _request: IncomingMessage) => {
    clients.set(socket, new Set());
    socket.on('close', () => clients.delete(socket));
    // Invalid UTF-8, an oversized or malformed frame: the library has already sent the close
    // frame (1007, 1009, 1002); without a listener the error would end the whole process.
    socket.on('error', (error) => {
      log(`serve: WebSocket closed on bad input: ${error.message}`);
      clients.delete(socket);
    });
    socket.on('message', async (data) => {
      let id: unknown = null;
      try {
        const frame = decodeClientFrame(data.toString());
        id = frame.id;
        if (frame.kind === 'refused') return reply(socket, encodeReply(id, frame.response));
        if (frame.kind === 'subscribe') {
          if (clients.has(socket)) clients.set(socket, new Set(frame.names));
          return reply(socket, encodeReply(id, { ok: true, result: { subscribed: frame.names } }));
        }
        reply(socket, encodeReply(id, await dispatcher.dispatch(frame.request)));
      } catch {
        reply(socket, encodeReply(id, MALFORMED_REQUEST));
      }
    });
  });
  return {
    server,
    close() {
      unsubscribe();
      for (const client of clients.keys()) client.terminate();
      server.close();
    },
  };
}
