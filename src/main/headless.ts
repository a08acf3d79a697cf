import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { RpcDispatcher } from './rpc/dispatcher';
import type { ServiceContainer } from './services';
import { createWebSocketTransport } from './transport/ws';

export const CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";
const TOKEN_COOKIE = 'inferlab_token';
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json', '.ico': 'image/x-icon', '.woff2': 'font/woff2',
};

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export interface HeadlessServer {
  url: string;
  port: number;
  token: string | null;
  close(): Promise<void>;
}

function cookieToken(request: http.IncomingMessage): string | null {
  const cookie = request.headers.cookie ?? '';
  const match = new RegExp(`(?:^|;\\s*)${TOKEN_COOKIE}=([^;]+)`).exec(cookie);
  return match ? decodeURIComponent(match[1]!) : null;
}

function sameToken(given: string | null, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/**
 * `inferlab serve`: the renderer and the `/rpc` WebSocket over one HTTP server. Loopback by
 * default. Only pages served from this origin may open the WebSocket (a page the user
 * happens to visit must not drive their GPU), and the Host header must name this server
 * (no DNS rebinding). A non-loopback host also requires the random token in the URL.
 */
export async function startHeadlessServer(options: { container: ServiceContainer; rendererDir: string; host: string; port: number }): Promise<HeadlessServer> {
  const { container, rendererDir, host } = options;
  const token = isLoopback(host) ? null : crypto.randomBytes(24).toString('base64url');
  const dispatcher = new RpcDispatcher(container.services);
  const transport = createWebSocketTransport(dispatcher, container.events);
  let allowedHosts = new Set<string>();

  const authorized = (request: http.IncomingMessage, url: URL) => token === null || sameToken(url.searchParams.get('token'), token) || sameToken(cookieToken(request), token);
  const hostAllowed = (request: http.IncomingMessage) => allowedHosts.has((request.headers.host ?? '').toLowerCase());

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://placeholder');
    const baseHeaders = { 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' };
    if (!hostAllowed(request)) {
      response.writeHead(421, { ...baseHeaders, 'content-type': 'text/plain' }).end('Misdirected request: unknown Host');
      return;
    }
    if (!authorized(request, url)) {
      response.writeHead(401, { ...baseHeaders, 'content-type': 'text/plain' }).end('Open the URL printed by inferlab serve: it carries the access token.');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, baseHeaders).end();
      return;
    }
    const relative = decodeURIComponent(url.pathname) === '/' ? 'index.html' : decodeURIComponent(url.pathname).replace(/^\/+/, '');
    const file = path.resolve(rendererDir, relative);
    const inside = file.startsWith(path.resolve(rendererDir) + path.sep);
    const target = inside && fs.existsSync(file) && fs.statSync(file).isFile() ? file : path.join(rendererDir, 'index.html');
    const headers: Record<string, string> = { ...baseHeaders, 'content-type': TYPES[path.extname(target)] ?? 'application/octet-stream', 'cache-control': 'no-cache' };
    if (token && url.searchParams.get('token')) headers['set-cookie'] = `${TOKEN_COOKIE}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`;
    response.writeHead(200, headers);
    if (request.method === 'HEAD') response.end();
    else fs.createReadStream(target).pipe(response);
  });

  server.on('upgrade', (request: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? '/', 'http://placeholder');
    const origin = request.headers.origin;
    const originAllowed = origin === undefined ? token !== null : allowedHosts.has(origin.replace(/^https?:\/\//, '').toLowerCase()) && origin.startsWith('http://');
    if (url.pathname !== '/rpc' || !hostAllowed(request) || !originAllowed || !authorized(request, url)) {
      socket.end('HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\n');
      return;
    }
    transport.server.handleUpgrade(request, socket, head, (ws) => transport.server.emit('connection', ws, request));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const names = isLoopback(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
  allowedHosts = new Set(names.map((name) => `${name}:${port}`.toLowerCase()));
  const printable = host.includes(':') ? `[${host}]` : host;
  const url = `http://${printable}:${port}/${token ? `?token=${token}` : ''}`;
  return {
    url,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        transport.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
