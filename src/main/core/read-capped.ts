import fs from 'node:fs';
import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';

/** Workloads, ShareGPT imports and evaluation texts: large enough for real ones, small enough that one file cannot take the process's memory. */
export const MAX_INPUT_FILE_BYTES = 256 * 1024 * 1024;

export function mib(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

/**
 * Reads a whole regular file, refusing it past `maxBytes`. Opened without blocking: opening a
 * FIFO that no one writes to would otherwise wait forever. What was opened is checked from its
 * descriptor, so a FIFO, a device such as /dev/zero or a socket is refused before any read,
 * whatever the path pointed to when looked at before; the size is checked again while reading,
 * so a file that grows is refused at the cap instead of read until memory runs out. The open
 * and every read run on Node's I/O pool, never on the event loop: a file on a stalled network
 * mount delays only the call that named it, and `serve` answers other calls between chunks.
 */
export async function readFileCapped(file: string, what: string, maxBytes = MAX_INPUT_FILE_BYTES): Promise<Buffer> {
  const { handle, stat } = await openRegularFile(file, what);
  try {
    const collected = new CappedChunks(file, what, maxBytes, stat.size);
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    for (;;) {
      const { bytesRead } = await handle.read(chunk, 0, collected.nextReadLength(chunk.length), null);
      if (bytesRead === 0) return collected.whole();
      collected.add(chunk, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

export async function readTextFileCapped(file: string, what: string, maxBytes = MAX_INPUT_FILE_BYTES): Promise<string> {
  return (await readFileCapped(file, what, maxBytes)).toString('utf8');
}

const CHUNK_BYTES = 1024 * 1024;

/** The chunks read so far, refused past the cap: checked before the first read and again on every chunk, so a file that grows stops at the cap. */
class CappedChunks {
  private readonly chunks: Buffer[] = [];
  private total = 0;

  constructor(
    private readonly file: string,
    private readonly what: string,
    private readonly maxBytes: number,
    sizeWhenOpened: number,
  ) {
    if (sizeWhenOpened > maxBytes) throw this.tooLarge(`${sizeWhenOpened} bytes`);
  }

  /** One byte past the cap is asked for, so a file that grew past it is seen. */
  nextReadLength(chunkLength: number): number {
    return Math.min(chunkLength, this.maxBytes + 1 - this.total);
  }

  add(chunk: Buffer, length: number): void {
    this.total += length;
    if (this.total > this.maxBytes) throw this.tooLarge(`more than ${this.maxBytes} bytes`);
    this.chunks.push(Buffer.from(chunk.subarray(0, length)));
  }

  whole(): Buffer {
    return Buffer.concat(this.chunks, this.total);
  }

  private tooLarge(size: string): AppError {
    return fileTooLarge(this.file, this.what, size, this.maxBytes);
  }
}

/** The refusal of a file over its cap, for every reader that holds a file to one. */
export function fileTooLarge(file: string, what: string, size: string, maxBytes: number): AppError {
  return new AppError(ErrorCode.InvalidInput, `${file}: ${what} is ${size}, over the ${mib(maxBytes)} (${maxBytes}-byte) limit`, {
    file,
    limitBytes: maxBytes,
  });
}

function openFailure(file: string, what: string, error: unknown): AppError {
  const code = (error as NodeJS.ErrnoException).code;
  return new AppError(
    code === 'ENOENT' ? ErrorCode.NotFound : ErrorCode.InvalidInput,
    `${file}: ${what} ${code === 'ENOENT' ? 'not found' : `cannot be read (${(error as Error).message})`}`,
  );
}

function notRegularFileProblem(stat: fs.Stats): string | null {
  if (stat.isDirectory()) return 'is a folder, not a file';
  if (stat.isFile()) return null;
  return `is ${specialKind(stat)}, not a regular file; save its contents to a file and give that file`;
}

/**
 * Opens a file for reading without blocking and refuses, from its descriptor, anything that is
 * not a regular file, for every reader here and for callers that stream a file (the hash) or read
 * only its first bytes. Both the open and the check run on Node's I/O pool. The caller closes
 * the handle.
 */
export async function openRegularFile(file: string, what: string): Promise<{ handle: fs.promises.FileHandle; stat: fs.Stats }> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw openFailure(file, what, error);
  }
  try {
    const stat = await handle.stat();
    const problem = notRegularFileProblem(stat);
    if (problem) throw new AppError(ErrorCode.InvalidInput, `${file}: ${what} ${problem}`);
    return { handle, stat };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function specialKind(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}
