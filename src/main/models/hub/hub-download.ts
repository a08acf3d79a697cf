import crypto from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { memorySize } from '../../../shared/memory-size';
import type { HubRepoRef } from './hub-access';
import { hubFailure } from './hub-access';
import { hubRequestFailure, resolveUrl, type HubFile, type HubSession } from './hub-files';
import { sizeOnDisk } from './hub-cache';

export interface DownloadOptions {
  signal: AbortSignal;
  /** The bytes of the file in place so far, what earlier attempts left included. */
  onBytes: (bytesDone: number) => void;
  /** Tries per file after a dropped connection, each resuming where the last one stopped. */
  attempts?: number;
  /** A body that sends nothing for this long is treated as a dropped connection. */
  stallMs?: number;
  /** The first wait before trying again; it doubles each time. */
  retryDelayMs?: number;
}

const MAX_REDIRECTS = 5;
const DEFAULT_ATTEMPTS = 5;
const DEFAULT_STALL_MS = 60_000;
const DEFAULT_RETRY_DELAY_MS = 500;

/** A failure worth another try from where the file stopped: the connection, not the hub's answer. */
class DroppedConnection extends Error {}

function partialSize(file: string): number {
  return sizeOnDisk(file) ?? 0;
}

/** The SHA-256 of what an interrupted download already wrote, so the check at the end covers every byte. */
async function hashExisting(file: string, length: number): Promise<crypto.Hash> {
  const hash = crypto.createHash('sha256');
  if (length === 0) return hash;
  for await (const chunk of fs.createReadStream(file, { start: 0, end: length - 1 })) hash.update(chunk as Buffer);
  return hash;
}

/**
 * Follows the hub's redirects (large files live on a CDN) one hop at a time through the
 * session, which sends the token to the hub's own origin only.
 */
async function openRange(
  url: string,
  from: number,
  session: HubSession,
  ref: HubRepoRef,
  file: HubFile,
  signal: AbortSignal,
): Promise<Response> {
  let target = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let response: Response;
    try {
      response = await session.download(target, {
        redirect: 'manual',
        signal,
        headers: from > 0 ? { range: `bytes=${from}-` } : {},
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new DroppedConnection(hubRequestFailure(session, ref, error, file.path).message);
    }
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      target = new URL(location, target).toString();
      continue;
    }
    if (!response.ok) {
      const message = await response.text().catch(() => '');
      if (response.status >= 500) throw new DroppedConnection(`the hub answered ${response.status}`);
      throw hubFailure(ref, session.endpoint, response.status, response.headers.get('x-error-code'), message.slice(0, 200), file.path);
    }
    return response;
  }
  throw new AppError(ErrorCode.RequestFailed, `${file.path}: more than ${MAX_REDIRECTS} redirects from ${url}`);
}

function diskFailure(error: unknown, file: HubFile, partial: string, written: number): AppError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return new AppError(
      ErrorCode.StorageFailed,
      `the disk is full: ${file.path} stopped at ${memorySize(written)} of ${memorySize(file.size)} in ${partial}; free space and pull again to resume, or set HF_HUB_CACHE to a disk with room (delete that file to give its space back)`,
    );
  return new AppError(ErrorCode.StorageFailed, `cannot write ${partial}: ${(error as Error).message}`);
}

/** One attempt: appends what the hub sends from `from` on, feeding the hash, until the body ends. */
async function receive(
  response: Response,
  from: number,
  partial: string,
  hash: crypto.Hash,
  file: HubFile,
  options: Required<Pick<DownloadOptions, 'onBytes' | 'stallMs'>> & { signal: AbortSignal },
  stalled: AbortController,
): Promise<void> {
  const out = await fs.promises.open(partial, from > 0 ? 'a' : 'w');
  let written = from;
  let timer = setTimeout(() => stalled.abort(), options.stallMs);
  try {
    const reader = response.body!.getReader();
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (options.signal.aborted) throw error;
        throw new DroppedConnection(stalled.signal.aborted ? 'the download stalled' : 'the connection dropped');
      }
      if (chunk.done) break;
      clearTimeout(timer);
      timer = setTimeout(() => stalled.abort(), options.stallMs);
      if (written + chunk.value.length > file.size)
        throw new AppError(ErrorCode.RequestFailed, `${file.path}: the hub sent more than the ${file.size} bytes its listing gives`);
      try {
        await out.write(chunk.value);
      } catch (error) {
        throw diskFailure(error, file, partial, written);
      }
      hash.update(chunk.value);
      written += chunk.value.length;
      options.onBytes(written);
    }
  } finally {
    clearTimeout(timer);
    await out.close();
  }
  if (written < file.size) throw new DroppedConnection(`the connection closed at ${written} of ${file.size} bytes`);
}

/**
 * Downloads one hub file into `partial`, resuming what an earlier attempt left there, and checks
 * it against the SHA-256 the hub lists. A mismatch deletes the partial file and says so; a
 * dropped connection is tried again from where it stopped. Returns when `partial` holds exactly
 * the file the hub describes.
 */
export async function downloadHubFile(
  ref: HubRepoRef,
  file: HubFile & { sha256: string },
  partial: string,
  session: HubSession,
  options: DownloadOptions,
): Promise<void> {
  const url = resolveUrl(session.endpoint, ref, file.path);
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  let hash = await hashExisting(partial, Math.min(partialSize(partial), file.size));
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (options.signal.aborted) throw options.signal.reason;
    const from = Math.min(partialSize(partial), file.size);
    const stalled = new AbortController();
    const signal = AbortSignal.any([options.signal, stalled.signal]);
    try {
      if (from < file.size) {
        const response = await openRange(url, from, session, ref, file, signal);
        // A server that ignores the range sends the whole file again: start over rather than append it.
        const restart = from > 0 && response.status === 200;
        if (restart) hash = crypto.createHash('sha256');
        await receive(response, restart ? 0 : from, partial, hash, file, { ...options, stallMs, signal }, stalled);
      }
      break;
    } catch (error) {
      if (!(error instanceof DroppedConnection) || attempt === attempts) {
        if (error instanceof DroppedConnection)
          throw new AppError(
            ErrorCode.RequestFailed,
            `${file.path}: ${error.message} (${attempts} tries); ${memorySize(partialSize(partial))} of ${memorySize(file.size)} kept: pull again to resume`,
          );
        throw error;
      }
      // The hash already holds every byte written: each chunk is hashed only once it is on disk.
      await sleep((options.retryDelayMs ?? DEFAULT_RETRY_DELAY_MS) * 2 ** (attempt - 1), undefined, { signal: options.signal });
    }
  }
  const size = partialSize(partial);
  const digest = hash.digest('hex');
  if (size !== file.size || digest !== file.sha256) {
    await fs.promises.rm(partial, { force: true });
    throw new AppError(
      ErrorCode.RequestFailed,
      `${file.path}: the downloaded bytes do not match the hub's SHA-256 (expected ${file.sha256}, got ${digest}, ${size} of ${file.size} bytes); the download was deleted: pull again, and if it repeats, check any proxy or HF_ENDPOINT mirror in between`,
    );
  }
}
