import { listFiles } from '@huggingface/hub';
import type { GgufByteSource } from '../gguf-reader';
import { hubEndpoint, hubFailure, hubToken, hubUnreachable, type HubRepoRef } from './hub-access';

/** A file of a hub repository, with the SHA-256 the hub records for large (LFS) files. */
export interface HubFile {
  path: string;
  size: number;
  sha256: string | null;
}

export interface HubOptions {
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

/** No single request to the hub may hang a plan: a header read is a few MiB. */
const REQUEST_TIMEOUT_MS = 60_000;

/** One plan's or pull's way to the hub: the endpoint and token read once, for every request it makes. */
export interface HubSession {
  endpoint: string;
  /** A fetch that sends the token only to the hub's own origin, and remembers the error code of its last answer (for the listing, whose errors arrive as thrown HubApiErrors). */
  fetch: typeof fetch;
  /** The same fetch without the whole-request time limit, for downloads of gigabytes; the caller watches for a stalled body itself. */
  download: typeof fetch;
  lastErrorCode: () => string | null;
}

export function openHubSession(options: HubOptions = {}): HubSession {
  const env = options.env ?? process.env;
  const endpoint = hubEndpoint(env);
  const token = hubToken(env);
  const origin = new URL(endpoint).origin;
  let errorCode: string | null = null;
  const send = async (input: Parameters<typeof fetch>[0], init: RequestInit | undefined, timeoutMs: number | null) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers);
    // A next-page link or a redirect may point elsewhere: the token stays with the hub.
    if (token && url.origin === origin) headers.set('authorization', `Bearer ${token}`);
    else headers.delete('authorization');
    const signals = [options.signal, init?.signal, timeoutMs === null ? null : AbortSignal.timeout(timeoutMs)].filter(
      (signal): signal is AbortSignal => Boolean(signal),
    );
    const response = await fetch(url, { ...init, headers, signal: signals.length > 0 ? AbortSignal.any(signals) : null });
    errorCode = response.ok || (response.status >= 300 && response.status < 400) ? null : response.headers.get('x-error-code');
    return response;
  };
  return {
    endpoint,
    fetch: (input, init) => send(input, init, REQUEST_TIMEOUT_MS),
    download: (input, init) => send(input, init, null),
    lastErrorCode: () => errorCode,
  };
}

export function hubRequestFailure(session: HubSession, ref: HubRepoRef, error: unknown, what: string): Error {
  if (error instanceof Error && error.name === 'AbortError') return error;
  const status = (error as { statusCode?: number }).statusCode;
  if (typeof status === 'number')
    return hubFailure(ref, session.endpoint, status, session.lastErrorCode(), (error as Error).message.split('. URL:')[0]!, what);
  return hubUnreachable(session.endpoint, error);
}

/** Every file of the repository at its revision (the hub's tree listing, every page). */
export async function listHubFiles(ref: HubRepoRef, session: HubSession): Promise<HubFile[]> {
  const files: HubFile[] = [];
  try {
    for await (const entry of listFiles({
      repo: ref.repo,
      // The library puts the revision into the listing's path as given (its other calls encode
      // it): encoded here, a revision such as refs/pr/3 stays one segment of that path.
      revision: encodeURIComponent(ref.revision),
      recursive: true,
      hubUrl: session.endpoint,
      fetch: session.fetch,
    })) {
      if (entry.type !== 'file') continue;
      files.push({ path: entry.path, size: entry.lfs?.size ?? entry.size, sha256: entry.lfs?.oid ?? null });
    }
  } catch (error) {
    throw hubRequestFailure(session, ref, error, 'the file list');
  }
  return files;
}

export function resolveUrl(endpoint: string, ref: HubRepoRef, file: string): string {
  const encoded = file.split('/').map(encodeURIComponent).join('/');
  return `${endpoint}/${ref.repo}/resolve/${encodeURIComponent(ref.revision)}/${encoded}`;
}

/** Reads of a hub file by HTTP range, so a header is read without downloading the file. */
export function hubByteSource(ref: HubRepoRef, file: HubFile, session: HubSession): GgufByteSource {
  const url = resolveUrl(session.endpoint, ref, file.path);
  return {
    name: `hf:${ref.repo}/${file.path}`,
    size: file.size,
    read: async (position, length) => {
      const last = Math.min(file.size, position + length) - 1;
      if (last < position) return Buffer.alloc(0);
      let response: Response;
      try {
        response = await session.fetch(url, { headers: { range: `bytes=${position}-${last}` } });
      } catch (error) {
        throw hubRequestFailure(session, ref, error, file.path);
      }
      if (!response.ok) {
        const message = await response.text().catch(() => '');
        throw hubFailure(ref, session.endpoint, response.status, response.headers.get('x-error-code'), message.slice(0, 200), file.path);
      }
      // A server that ignores the range would send the whole file: stop it rather than download gigabytes.
      if (response.status !== 206) {
        await response.body?.cancel();
        throw hubFailure(ref, session.endpoint, response.status, null, 'the server ignored the byte range asked for', file.path);
      }
      const bytes = Buffer.from(await response.arrayBuffer());
      if (bytes.length > last - position + 1) return bytes.subarray(0, last - position + 1);
      return bytes;
    },
  };
}
