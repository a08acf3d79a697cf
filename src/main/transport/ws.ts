import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Emitter } from '../core/emitter';
import type { RpcDispatcher } from '../rpc/dispatcher';
import type { AppEvent } from '../services';
import { decodeClientFrame, encodeEvent, encodeReply, MALFORMED_REQUEST } from '../../shared/wire';

const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The browser transport (frames in shared/wire.ts): requests answered by id, events pushed to
 * every client. Who may connect is decided before the upgrade.
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
  const clients = new Set<WebSocket>();
  const unsubscribe = events.on((event) => {
    const message = encodeEvent(event.name, event.payload);
    for (const client of clients) reply(client, message);
  });
  server.on('connection', (socket: WebSocket, _request: IncomingMessage) => {
    clients.add(socket);
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
        const response = await dispatcher.dispatch(frame.request);
        reply(socket, encodeReply(id, response));
      } catch {
        reply(socket, encodeReply(id, MALFORMED_REQUEST));
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
