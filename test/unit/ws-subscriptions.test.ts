import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Emitter } from '../../src/main/core/emitter';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';
import type { AppEvent } from '../../src/main/services';
import type { AppServices } from '../../src/shared/contract';
import { createWebSocketTransport } from '../../src/main/transport/ws';
import { EVENT_NAMES } from '../../src/shared/contract';

/** The WebSocket transport alone, over a real socket: what each connection is sent. */
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const server of opened.splice(0)) await server.close();
});

async function transport() {
  const events = new Emitter<AppEvent>();
  const services = { doctor: { report: async () => ({ checks: [] }) } } as unknown as AppServices;
  const ws = createWebSocketTransport(new RpcDispatcher(services), events);
  const http_ = http.createServer();
  http_.on('upgrade', (request, socket, head) =>
    ws.server.handleUpgrade(request, socket, head, (client) => ws.server.emit('connection', client, request)),
  );
  await new Promise<void>((resolve) => http_.listen(0, '127.0.0.1', resolve));
  const port = (http_.address() as AddressInfo).port;
  opened.push({
    close: async () => {
      ws.close();
      await new Promise((resolve) => http_.close(resolve));
    },
  });
  return { events, port };
}

/** A client that keeps every frame it is sent, and answers by id. */
async function client(port: number) {
  const socket = new WebSocket(`ws://127.0.0.1:${port}/rpc`);
  const frames: Record<string, unknown>[] = [];
  const waiting = new Map<unknown, (frame: Record<string, unknown>) => void>();
  socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as Record<string, unknown>;
    frames.push(frame);
    waiting.get(frame.id)?.(frame);
  });
  await new Promise((resolve) => socket.once('open', resolve));
  let nextId = 1;
  const send = (frame: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = nextId++;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, ...frame }));
    });
  const events = () => frames.filter((frame) => 'event' in frame).map((frame) => frame.event);
  return { socket, send, events };
}

/** Every event once, then a request whose reply proves the events before it have been sent. */
async function emitEach(events: Emitter<AppEvent>, to: Awaited<ReturnType<typeof client>>) {
  for (const name of EVENT_NAMES) events.emit({ name, payload: { marker: name } } as unknown as AppEvent);
  await to.send({ service: 'doctor', method: 'report', args: [] });
}

describe('the WebSocket sends each client only the events it subscribed to', () => {
  it('sends nothing before a subscription, then exactly the named events, and follows a replaced set', async () => {
    const { events, port } = await transport();
    const tool = await client(port);
    const ui = await client(port);

    await emitEach(events, tool);
    expect(tool.events()).toEqual([]);

    expect(await ui.send({ subscribe: ['task.progress', 'telemetry.tick'] })).toMatchObject({
      ok: true,
      result: { subscribed: ['task.progress', 'telemetry.tick'] },
    });
    await emitEach(events, ui);
    expect(ui.events()).toEqual(['task.progress', 'telemetry.tick']);
    expect(tool.events()).toEqual([]);

    await ui.send({ subscribe: ['server.log'] });
    await emitEach(events, ui);
    expect(ui.events().slice(2)).toEqual(['server.log']);

    await ui.send({ subscribe: [] });
    await emitEach(events, ui);
    expect(ui.events()).toHaveLength(3);
    await emitEach(events, tool);
    expect(tool.events()).toEqual([]);
  });

  it('refuses a subscription to a name that is no event, saying which and what exists, and keeps the set it had', async () => {
    const { events, port } = await transport();
    const ui = await client(port);
    await ui.send({ subscribe: ['server.log'] });

    const refused = await ui.send({ subscribe: ['server.log', 'secrets.dump'] });
    expect(refused).toMatchObject({ ok: false, error: { code: 'invalid_input' } });
    expect((refused.error as { message: string }).message).toMatch(
      /no such event: "secrets\.dump"; the events are server\.state, .*telemetry\.tick/,
    );
    const notAList = await ui.send({ subscribe: 'server.log' });
    expect((notAList.error as { message: string }).message).toMatch(/a list of event names/);

    await emitEach(events, ui);
    expect(ui.events()).toEqual(['server.log']);
  });

  it('stops sending to a client once it has gone, without disturbing the others', async () => {
    const { events, port } = await transport();
    const gone = await client(port);
    const staying = await client(port);
    await gone.send({ subscribe: [...EVENT_NAMES] });
    await staying.send({ subscribe: ['server.state'] });
    gone.socket.close();
    await new Promise((resolve) => gone.socket.once('close', resolve));
    await emitEach(events, staying);
    expect(staying.events()).toEqual(['server.state']);
  });
});
