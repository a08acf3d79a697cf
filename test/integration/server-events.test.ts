import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppEvents, ServerProfile } from '../../src/shared/contract';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';
import { createServices, type ServiceContainer } from '../../src/main/services';
import { shellAccess } from '../../src/main/services/access';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const containers: ServiceContainer[] = [];
afterEach(async () => {
  for (const container of containers.splice(0)) await container.dispose();
});

function nextEvent(container: ServiceContainer, name: string): Promise<void> {
  return new Promise((resolve) => {
    const off = container.events.on((event) => {
      if (event.name !== name) return;
      off();
      resolve();
    });
  });
}

describe('server events', () => {
  it("pushes a server's log lines as server.log events, batched, beside its state changes", async () => {
    const container = await createServices({ dbPath: path.join(tempDir(), 'events.db'), access: shellAccess(), idleTelemetry: false });
    containers.push(container);
    const dispatcher = new RpcDispatcher(container.services);
    const logs: AppEvents['server.log'][] = [];
    const states: string[] = [];
    const ready = new Promise<void>((resolve) =>
      container.events.on((event) => {
        if (event.name === 'server.log') logs.push(event.payload as AppEvents['server.log']);
        if (event.name === 'server.state') {
          const state = (event.payload as AppEvents['server.state']).state;
          states.push(state);
          if (state === 'ready') resolve();
        }
      }),
    );
    const profile = (await dispatcher.dispatch({ service: 'servers', method: 'defaultProfile', args: [] })) as {
      ok: true;
      result: ServerProfile;
    };
    const started = await dispatcher.dispatch({
      service: 'servers',
      method: 'start',
      args: ['demo:q8_0', { ...profile.result, contextSize: 1024 }],
    });
    expect(started.ok, JSON.stringify(started)).toBe(true);
    const serverId = (started as { ok: true; result: { id: string } }).result.id;
    await ready;
    // Lines reach the page without polling, in batches, and match what servers.logs returns: once the batches
    // pushed so far end where the server's log does, however long this machine took to deliver them.
    const pushedLines = () => logs.filter((batch) => batch.serverId === serverId).flatMap((batch) => batch.lines);
    const tail = async () =>
      ((await dispatcher.dispatch({ service: 'servers', method: 'logs', args: [serverId] })) as { ok: true; result: string[] }).result;
    const caughtUp = async () => JSON.stringify(pushedLines().slice(-20)) === JSON.stringify((await tail()).slice(-20));
    for (;;) {
      // Listening before comparing: a batch that arrives during the comparison is not missed.
      const next = nextEvent(container, 'server.log');
      if (await caughtUp()) break;
      await next;
    }
    const pushed = pushedLines();
    expect(
      pushed.some((line) => /listening on/i.test(line)),
      pushed.slice(-5).join('\n'),
    ).toBe(true);
    expect(logs.length).toBeLessThan(pushed.length);
    expect(pushed.slice(-20)).toEqual((await tail()).slice(-20));
    await dispatcher.dispatch({ service: 'servers', method: 'stop', args: [serverId] });
    expect(states).toContain('starting');
  }, 60_000);
});
