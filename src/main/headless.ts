import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { ensurePrivateDir, PRIVATE_FILE_MODE, restrict, writePrivateFile } from './core/private-files';
import { RpcDispatcher } from './rpc/dispatcher';
import type { ServiceContainer } from './services';
import { createWebSocketTransport } from './transport/ws';
import { NO_TOKEN_MESSAGE } from '../shared/serve-access';
import { isLoopback } from './core/loopback';

export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

export interface HeadlessServer {
  /** The address to open: it carries the token, which the page keeps for this tab in sessionStorage. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

const TOKEN_PATTERN = /^[\w-]{32,128}$/;

/**
 * The access token, reused across restarts so a bookmarked URL keeps working. Kept owner-only:
 * anyone who can read it can drive the app.
 */
export function loadOrCreateToken(file: string): string {
  ensurePrivateDir(path.dirname(file));
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (TOKEN_PATTERN.test(existing)) {
      restrict(file, PRIVATE_FILE_MODE);
      return existing;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = crypto.randomBytes(24).toString('base64url');
  try {
    writePrivateFile(file, `${token}\n`);
  } catch (error) {
    // Another serve created it first: use theirs, so both accept the same bookmark.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const theirs = fs.readFileSync(file, 'utf8').trim();
    if (TOKEN_PATTERN.test(theirs)) return theirs;
    fs.rmSync(file, { force: true });
    writePrivateFile(file, `${token}\n`);
  }
  return token;
}

/** Cookies ignore ports, so two servers on one host would overwrite each other's page keys without it. */
function cookieName(port: number): string {
  return `inferlab_token_${port}`;
}

/** Split by hand: a browser (or anyone) may send a value that is not valid percent-encoding. */
function cookieValue(request: http.IncomingMessage, name: string): string | null {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === name) return part.slice(separator + 1).trim();
  }
  return null;
}

function bearer(request: http.IncomingMessage): string | null {
  const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
  return match ? match[1]! : null;
}

function sameToken(given: string | null, expected: string): boolean {
  if (!given) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && crypto.timingSafeEqual(a, b);
}

/** The request target, or null when it is not one `URL` accepts (absolute-form junk, a bad port). */
function parseTarget(request: http.IncomingMessage): URL | null {
  try {
    return new URL(request.url ?? '/', 'http://placeholder');
  } catch {
    return null;
  }
}

function decodePath(pathname: string): string | null {
  try {
    const decoded = decodeURIComponent(pathname);
    return decoded.includes('\0') ? null : decoded;
  } catch {
    return null;
  }
}

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const plain = (response: http.ServerResponse, status: number, text: string) =>
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' }).end(text);

// The build names each asset by its content's hash, so a changed asset gets a new name and a browser may keep
// the old one for good: a reload then fetches index.html alone. Private: the files sit behind the access token.
const HASHED_ASSET = /^assets\/[^/]+-[\w-]{8,}\.(?:js|css|woff2?|svg|png)$/;
const KEEP_HASHED_ASSET = 'private, max-age=31536000, immutable';

/** A file of the built UI, or its index.html for any path that is not one (the app routes itself); never a file outside it. */
function serveRendererFile(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  {
    rendererRoot,
    decoded,
    setCookie,
    log,
  }: { rendererRoot: string; decoded: string; setCookie: string | null; log: (line: string) => void },
): void {
  const relative = decoded === '/' ? 'index.html' : decoded.replace(/^\/+/, '');
  const file = path.resolve(rendererRoot, relative);
  const inside = file.startsWith(rendererRoot + path.sep);
  const target = inside && fs.existsSync(file) && fs.statSync(file).isFile() ? file : path.join(rendererRoot, 'index.html');
  const headers: Record<string, string> = {
    ...SECURITY_HEADERS,
    'content-type': TYPES[path.extname(target)] ?? 'application/octet-stream',
    'cache-control': target === file && HASHED_ASSET.test(relative) ? KEEP_HASHED_ASSET : 'no-cache',
  };
  if (setCookie) headers['set-cookie'] = setCookie;
  if (request.method === 'HEAD') {
    response.writeHead(200, headers).end();
    return;
  }
  const stream = fs.createReadStream(target);
  stream.on('error', (error) => {
    log(`serve: cannot read ${target}: ${error.message}`);
    if (!response.headersSent) plain(response, 404, 'Not found');
    else response.destroy();
  });
  stream.once('open', () => {
    response.writeHead(200, headers);
    stream.pipe(response);
  });
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  if (socket.writable) socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

/** A WebSocket upgrade to `/rpc`: admitted only with this server's Host, no foreign Origin, and the token. */
function admitUpgrade(
  request: http.IncomingMessage,
  socket: Duplex,
  checks: {
    knownHost: (hostAndPort: string) => boolean;
    hasToken: (request: http.IncomingMessage, url: URL) => boolean;
    admit: () => void;
    log: (line: string) => void;
  },
): void {
  socket.on('error', () => socket.destroy());
  try {
    const url = parseTarget(request);
    if (!url) return refuseUpgrade(socket, 400, 'Bad Request');
    if (!checks.knownHost(request.headers.host ?? '')) return refuseUpgrade(socket, 421, 'Misdirected Request');
    if (url.pathname !== '/rpc') return refuseUpgrade(socket, 403, 'Forbidden');
    // Browsers always send Origin: a page from elsewhere is refused even with the token.
    const origin = request.headers.origin;
    if (origin !== undefined && !(origin.startsWith('http://') && checks.knownHost(origin.slice('http://'.length))))
      return refuseUpgrade(socket, 403, 'Forbidden');
    if (!checks.hasToken(request, url)) return refuseUpgrade(socket, 401, 'Unauthorized');
    checks.admit();
  } catch (error) {
    checks.log(`serve: WebSocket upgrade failed: ${(error as Error).stack ?? error}`);
    refuseUpgrade(socket, 500, 'Internal Server Error');
  }
}

/** Listens, and returns the port (the one given, or the one the OS chose for 0). */
async function listen(server: http.Server, port: number, host: string, log: (line: string) => void): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  server.on('error', (error) => log(`serve: ${error.message}`));
  return (server.address() as { port: number }).port;
}

/** The Host values that name this server: on loopback, each loopback name; else the address it listens on. */
function hostsNaming(host: string, port: number): Set<string> {
  const names = isLoopback(host) ? ['127.0.0.1', 'localhost', '[::1]'] : [host.includes(':') ? `[${host}]` : host];
  return new Set(names.map((name) => `${name}:${port}`.toLowerCase()));
}

/**
 * `inferlab serve`: the renderer and the `/rpc` WebSocket over one HTTP server. Every request
 * needs a credential, loopback included: any local process can send any Origin, so the
 * Origin check only keeps other web pages out. `/rpc` takes only the random token, as
 * `?token=` or a Bearer header. The page gets the token from the printed URL and keeps it in
 * sessionStorage, which belongs to this origin alone, port included. The cookie the browser
 * is given opens the UI's static files and nothing else: browsers send cookies for a host to
 * every port on it, so a cookie reaches any other service on this host, and it must be useless
 * there. The Host header must name this server (no DNS rebinding). No input ends the
 * process: every handler answers bad input with a 4xx or a close frame.
 */
export async function startHeadlessServer(
  options: {
    container: ServiceContainer;
    rendererDir: string;
    host: string;
    port: number;
    log?: (line: string) => void;
  } & (
    | { /** Where the token is kept across restarts. */ tokenFile: string }
    | { /** One for this process only (the desktop window's). */ token: string }
  ),
): Promise<HeadlessServer> {
  const { container, rendererDir, host } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const token = 'token' in options ? options.token : loadOrCreateToken(options.tokenFile);
  // What the cookie carries: new with every start, and no key to /rpc.
  const pageKey = crypto.randomBytes(24).toString('base64url');
  const dispatcher = new RpcDispatcher(container.services);
  const transport = createWebSocketTransport(dispatcher, container.events, log);
  let allowedHosts = new Set<string>();
  let cookie = cookieName(0);
  const rendererRoot = path.resolve(rendererDir);

  const hostAllowed = (request: http.IncomingMessage) => allowedHosts.has((request.headers.host ?? '').toLowerCase());
  const queryToken = (url: URL) => url.searchParams.get('token');
  const hasToken = (request: http.IncomingMessage, url: URL) => sameToken(bearer(request), token) || sameToken(queryToken(url), token);
  const mayReadPage = (request: http.IncomingMessage, url: URL) =>
    hasToken(request, url) || sameToken(cookieValue(request, cookie), pageKey);

  const handle = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const url = parseTarget(request);
    if (!url) return plain(response, 400, 'Bad request target');
    if (!hostAllowed(request)) return plain(response, 421, 'Misdirected request: unknown Host');
    // A wrong token is refused even beside a good cookie: a stale bookmark should say so, not half work.
    if (url.searchParams.has('token') ? !hasToken(request, url) : !mayReadPage(request, url)) return plain(response, 401, NO_TOKEN_MESSAGE);
    if (request.method !== 'GET' && request.method !== 'HEAD') return plain(response, 405, 'Method not allowed');
    const decoded = decodePath(url.pathname);
    if (decoded === null) return plain(response, 400, 'Bad percent-encoding in the path');
    // The page itself moves the token from the address bar into sessionStorage (api/ws-bridge.ts).
    const setCookie = url.searchParams.has('token') ? `${cookie}=${pageKey}; HttpOnly; SameSite=Strict; Path=/` : null;
    serveRendererFile(request, response, { rendererRoot, decoded, setCookie, log });
  };

  const server = http.createServer((request, response) => {
    try {
      handle(request, response);
    } catch (error) {
      log(`serve: ${request.method} ${JSON.stringify(request.url)} failed: ${(error as Error).stack ?? error}`);
      if (!response.headersSent) plain(response, 500, 'Internal error');
      else response.destroy();
    }
  });

  server.on('upgrade', (request: http.IncomingMessage, socket: Duplex, head: Buffer) =>
    admitUpgrade(request, socket, {
      knownHost: (hostAndPort) => allowedHosts.has(hostAndPort.toLowerCase()),
      hasToken,
      admit: () => transport.server.handleUpgrade(request, socket, head, (ws) => transport.server.emit('connection', ws, request)),
      log,
    }),
  );

  const port = await listen(server, options.port, host, log);
  cookie = cookieName(port);
  allowedHosts = hostsNaming(host, port);
  const printable = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${printable}:${port}/?token=${token}`,
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
