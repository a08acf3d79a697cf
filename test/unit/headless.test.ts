import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { Emitter } from '../../src/main/core/emitter';
import { startHeadlessServer, type HeadlessServer } from '../../src/main/headless';
import type { ServiceContainer } from '../../src/main/services';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const running: HeadlessServer[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
});

/** Just enough of the services for a round trip: the security under test sits in front of them. */
function fakeContainer(): ServiceContainer {
  const services = { doctor: { report: async () => ({ checks: [] }) } };
  return { services, events: new Emitter(), dbPath: ':memory:', dispose: async () => {} } as unknown as ServiceContainer;
}

async function serve(options: { tokenFile?: string; host?: string } = {}) {
  const dir = tempDir();
  const rendererDir = path.join(dir, 'renderer');
  fs.mkdirSync(rendererDir);
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>ui</title>');
  const tokenFile = options.tokenFile ?? path.join(dir, 'data', 'serve-token');
  const server = await startHeadlessServer({
    container: fakeContainer(),
    rendererDir,
    host: options.host ?? '127.0.0.1',
    port: 0,
    tokenFile,
  });
  running.push(server);
  return { server: Object.assign(server, { rendererDir }), tokenFile, token: new URL(server.url).searchParams.get('token') };
}

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function get(port: number, target: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path: target, headers: { host: `127.0.0.1:${port}`, ...headers } }, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    request.on('error', reject);
  });
}

/** Bytes straight onto the socket, for requests no well-behaved client would send. */
function raw(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk));
    socket.on('error', () => resolve(reply));
    socket.on('close', () => resolve(reply));
    setTimeout(() => socket.destroy(), 300);
  });
}

type Outcome = { kind: 'open'; socket: WebSocket } | { kind: 'refused'; status: number };

function connect(port: number, options: { origin?: string; query?: string; cookie?: string } = {}): Promise<Outcome> {
  const headers: Record<string, string> = {};
  if (options.origin) headers.origin = options.origin;
  if (options.cookie) headers.cookie = options.cookie;
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/rpc${options.query ?? ''}`, { headers });
    socket.on('open', () => resolve({ kind: 'open', socket }));
    socket.on('unexpected-response', (_request, response) => resolve({ kind: 'refused', status: response.statusCode ?? 0 }));
    socket.on('error', () => resolve({ kind: 'refused', status: 0 }));
  });
}

function call(socket: WebSocket, id: number): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const onMessage = (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>;
      if (message.id !== id) return;
      socket.off('message', onMessage);
      resolve(message);
    };
    socket.on('message', onMessage);
    socket.send(JSON.stringify({ id, service: 'doctor', method: 'report', args: [] }));
  });
}

describe('inferlab serve: authentication on loopback too', () => {
  it('refuses a local WebSocket client that forges the Origin but has no token, and serves one with it', async () => {
    const { server, token } = await serve();
    expect(token).toMatch(/^[\w-]{32,}$/);
    const origin = `http://127.0.0.1:${server.port}`;
    const forged = await connect(server.port, { origin });
    expect(forged).toEqual({ kind: 'refused', status: 401 });
    const wrong = await connect(server.port, { origin, query: `?token=${token!.slice(1)}x` });
    expect(wrong).toEqual({ kind: 'refused', status: 401 });
    const foreign = await connect(server.port, { origin: 'http://evil.example', query: `?token=${token}` });
    expect(foreign).toEqual({ kind: 'refused', status: 403 });

    const withQuery = await connect(server.port, { origin, query: `?token=${token}` });
    expect(withQuery.kind).toBe('open');
    if (withQuery.kind !== 'open') return;
    expect(await call(withQuery.socket, 1)).toMatchObject({ id: 1, ok: true });
    withQuery.socket.close();
    // Scripts may present it as a Bearer header instead.
    expect((await get(server.port, '/', { authorization: `Bearer ${token}` })).status).toBe(200);
    expect((await get(server.port, '/', { authorization: `Bearer ${token!.slice(1)}x` })).status).toBe(401);
  });

  it('answers 401 without a credential; ?token= serves the page and a cookie that opens its files only, never /rpc', async () => {
    const { server, token, tokenFile } = await serve();
    const bare = await get(server.port, '/');
    expect(bare.status).toBe(401);
    expect(bare.body).not.toMatch(/<title>ui/);
    expect((await get(server.port, '/index.html')).status).toBe(401);
    expect((await get(server.port, `/?token=${token!.slice(1)}x`)).status).toBe(401);

    // No redirect: the page moves the token from the address bar into sessionStorage itself.
    const entry = await get(server.port, `/?token=${token}`);
    expect(entry.status).toBe(200);
    expect(entry.body).toMatch(/<title>ui/);
    const cookie = entry.headers['set-cookie']?.[0] ?? '';
    expect(cookie).toContain(`inferlab_token_${server.port}=`);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Strict/i);
    const pair = cookie.split(';')[0]!;

    const page = await get(server.port, '/', { cookie: pair });
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/<title>ui/);
    // Another port's cookie (another serve on the same host) does not open this one.
    expect((await get(server.port, '/', { cookie: pair.replace(`_${server.port}=`, '_1=') })).status).toBe(401);

    // Attack: browsers send a host's cookies to every port on it, so any other local service the browser visits
    // receives this one. It holds no token, and presented to /rpc, as a browser or as a script would, it opens nothing.
    expect(pair.split('=')[1]).not.toBe(token);
    expect(pair).not.toContain(token!);
    const origin = `http://127.0.0.1:${server.port}`;
    expect(await connect(server.port, { origin, cookie: pair })).toEqual({ kind: 'refused', status: 401 });
    expect(await connect(server.port, { cookie: pair })).toEqual({ kind: 'refused', status: 401 });
    expect(await connect(server.port, { query: `?token=${pair.split('=')[1]}` })).toEqual({ kind: 'refused', status: 401 });
    // A new start hands out a new page key: a cookie from an earlier start opens nothing.
    const again = await serve({ tokenFile });
    expect((await get(again.server.port, '/', { cookie: pair.replace(`_${server.port}=`, `_${again.server.port}=`) })).status).toBe(401);
  });

  it('keeps the token in a 0600 file so a bookmarked URL survives a restart', async () => {
    const first = await serve();
    expect(fs.statSync(first.tokenFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(first.tokenFile, 'utf8').trim()).toBe(first.token);
    await first.server.close();
    running.splice(running.indexOf(first.server), 1);
    const second = await serve({ tokenFile: first.tokenFile });
    expect(second.token).toBe(first.token);
    expect((await get(second.server.port, `/?token=${first.token}`)).status).toBe(200);
  });
});

describe('inferlab serve survives malformed input', () => {
  async function stillServes(port: number, token: string) {
    expect((await get(port, `/?token=${token}`)).status).toBe(200);
    const socket = await connect(port, { query: `?token=${token}` });
    expect(socket.kind).toBe('open');
    if (socket.kind === 'open') {
      expect(await call(socket.socket, 7)).toMatchObject({ id: 7, ok: true });
      socket.socket.close();
    }
  }

  it('turns bad escapes, bad hosts and bad URLs into 4xx answers', async () => {
    const { server, token } = await serve();
    // What an <img src> on any web page can send: no token needed to reach the parser.
    expect((await get(server.port, '/%E0%A4%A')).status).toBe(401);
    expect((await get(server.port, `/%E0%A4%A?token=${token}`)).status).toBe(400);
    const entry = await get(server.port, `/?token=${token}`);
    expect((await get(server.port, '/%E0%A4%A', { cookie: entry.headers['set-cookie']![0]!.split(';')[0]! })).status).toBe(400);
    // A doubled slash is a path like any other: the page, never a redirect to another site.
    for (const target of [`//evil.example/?token=${token}`, `/%2F/evil.example/?token=${token}`, `/\\evil.example/?token=${token}`]) {
      const answer = await get(server.port, target);
      expect(answer.headers.location).toBeUndefined();
      expect(answer.status).toBe(200);
    }
    expect((await get(server.port, '/', { cookie: `inferlab_token_${server.port}=%E0%A4%A` })).status).toBe(401);
    expect((await get(server.port, '/', { cookie: 'inferlab_token=%E0%A4%A' })).status).toBe(401);
    const status = (reply: string) => /^HTTP\/1\.1 (\d{3}) /.exec(reply)?.[1] ?? reply;
    const upgrade = `Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n`;
    const auth = `Authorization: Bearer ${token}\r\n`;
    const close = 'Connection: close\r\n';
    // Request targets that URL rejects: a port out of range, an unclosed IPv6 literal.
    expect(status(await raw(server.port, `GET //a:99999/ HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${auth}${close}\r\n`))).toBe('400');
    expect(status(await raw(server.port, `GET http://[/ HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${auth}${close}\r\n`))).toBe('400');
    expect(status(await raw(server.port, `GET //a:99999/rpc HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${upgrade}${auth}\r\n`))).toBe(
      '400',
    );
    // A Host naming anything but this server is what DNS rebinding sends: 421, even with the token.
    for (const host of ['[', `evil.example:${server.port}`, '127.0.0.1', `127.0.0.1:${server.port + 1}`]) {
      expect(status(await raw(server.port, `GET / HTTP/1.1\r\nHost: ${host}\r\n${auth}${close}\r\n`)), host).toBe('421');
      expect(status(await raw(server.port, `GET /rpc HTTP/1.1\r\nHost: ${host}\r\n${upgrade}${auth}\r\n`)), host).toBe('421');
    }
    // An upgrade to any path but /rpc, here one with a bad escape and a bad cookie.
    expect(
      status(
        await raw(
          server.port,
          `GET /rpc%E0%A4%A HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\n${upgrade}Cookie: inferlab_token=%E0%A4%A\r\n\r\n`,
        ),
      ),
    ).toBe('403');
    await stillServes(server.port, token!);
  });

  it('serves files from the UI folder only: dot-dot paths, raw or escaped, reach nothing beside it', async () => {
    const { server, token } = await serve();
    // A file one level above the UI folder, where a dot-dot path would land.
    const secret = path.join(path.dirname(server.rendererDir), 'secret.txt');
    fs.writeFileSync(secret, 'TRAVERSAL-MARKER');
    const auth = `Authorization: Bearer ${token}\r\nHost: 127.0.0.1:${server.port}\r\n`;
    for (const target of [
      '/../secret.txt',
      '/..%2fsecret.txt',
      '/%2e%2e/secret.txt',
      '/%2e%2e%2fsecret.txt',
      '/....//secret.txt',
      '/assets/../../secret.txt',
    ]) {
      const reply = await raw(server.port, `GET ${target} HTTP/1.1\r\n${auth}Connection: close\r\n\r\n`);
      expect(reply, target).toMatch(/^HTTP\/1\.1 (200|400|404)/);
      expect(reply, target).not.toContain('TRAVERSAL-MARKER');
    }
    expect((await get(server.port, '/', { authorization: `Bearer ${token}` })).body).toMatch(/<title>ui<\/title>/);
  });

  it('closes a WebSocket that sends invalid UTF-8 or an oversized frame, and keeps serving', async () => {
    const { server, token } = await serve();
    const bad = await connect(server.port, { query: `?token=${token}` });
    if (bad.kind !== 'open') throw new Error('expected the socket to open');
    const closed = new Promise<number>((resolve) => bad.socket.on('close', (code) => resolve(code)));
    bad.socket.on('error', () => {});
    // A text frame whose payload is not UTF-8: the client library refuses to build one, so write it raw.
    const frame = Buffer.from([0x81, 0x82, 0, 0, 0, 0, 0xc3, 0x28]);
    (bad.socket as unknown as { _socket: net.Socket })._socket.write(frame);
    expect(await closed).toBe(1007);

    const big = await connect(server.port, { query: `?token=${token}` });
    if (big.kind !== 'open') throw new Error('expected the socket to open');
    const bigClosed = new Promise<number>((resolve) => big.socket.on('close', (code) => resolve(code)));
    big.socket.on('error', () => {});
    // Only the header of a frame announcing 2^40 bytes: the server must refuse it from the length alone.
    const header = Buffer.alloc(14);
    header[0] = 0x82;
    header[1] = 0x80 | 127;
    header.writeBigUInt64BE(2n ** 40n, 2);
    (big.socket as unknown as { _socket: net.Socket })._socket.write(header);
    expect(await bigClosed).toBe(1009);
    await stillServes(server.port, token!);
  });
});
