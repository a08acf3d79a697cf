import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';
import { fileTooLarge, mib, openRegularFile } from './read-capped';

export interface LineBounds {
  /** The most bytes one line may hold, its newline not counted. */
  maxLineBytes: number;
  /** The most bytes the whole file may hold. */
  maxFileBytes: number;
  /** What to do about a refused line, said after the refusal. */
  remedy?: string;
}

export interface FileLine {
  /** Counted from 1. */
  number: number;
  /** The line without its newline: a view that stays valid only until the next line is asked for. */
  bytes: Buffer;
}

const CHUNK_BYTES = 1024 * 1024;

function lineTooLong(file: string, what: string, line: number, bounds: LineBounds): AppError {
  return new AppError(
    ErrorCode.InvalidInput,
    `${file}:${line}: this line of ${what} is longer than ${mib(bounds.maxLineBytes)} (${bounds.maxLineBytes} bytes), ` +
      `the most one line may hold; it was refused without being read whole.${bounds.remedy ? ` ${bounds.remedy}.` : ''}`,
    { file, line, limitBytes: bounds.maxLineBytes },
  );
}

/**
 * The lines of a regular file, read a chunk at a time. A file read whole and then split holds
 * all of it, and then each line, at once; here a line is held only up to `maxLineBytes`: past
 * that it is refused, naming the file and the line, as soon as that many of its bytes have
 * arrived. The file is opened as `readFileCapped` opens it (no FIFO, no device) and held to
 * `maxFileBytes` before and while it is read. Every chunk is read on Node's I/O pool, so the
 * event loop turns at least once per MiB read, whatever the lines are like: the consumer's work
 * between two turns is the lines that end in one chunk. A final piece without a newline is a
 * line; the empty piece after a final newline is not.
 */
export async function* readLinesCapped(file: string, what: string, bounds: LineBounds): AsyncGenerator<FileLine> {
  const { handle, stat } = await openRegularFile(file, what);
  try {
    if (stat.size > bounds.maxFileBytes) throw fileTooLarge(file, what, `${stat.size} bytes`, bounds.maxFileBytes);
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    // The start of the line still open at the end of the last chunk, copied out of it.
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let number = 1;
    let total = 0;
    for (;;) {
      // One byte past the cap is asked for, so a file that grew past it is seen.
      const { bytesRead } = await handle.read(chunk, 0, Math.min(CHUNK_BYTES, bounds.maxFileBytes + 1 - total), null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total > bounds.maxFileBytes) throw fileTooLarge(file, what, `more than ${bounds.maxFileBytes} bytes`, bounds.maxFileBytes);
      const data = chunk.subarray(0, bytesRead);
      let start = 0;
      for (let end = data.indexOf(0x0a, start); end !== -1; end = data.indexOf(0x0a, start)) {
        if (pendingBytes + end - start > bounds.maxLineBytes) throw lineTooLong(file, what, number, bounds);
        const piece = data.subarray(start, end);
        yield { number, bytes: pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]) };
        pending = [];
        pendingBytes = 0;
        number += 1;
        start = end + 1;
      }
      if (start < data.length) {
        pendingBytes += data.length - start;
        if (pendingBytes > bounds.maxLineBytes) throw lineTooLong(file, what, number, bounds);
        pending.push(Buffer.from(data.subarray(start)));
      }
    }
    if (pendingBytes > 0) yield { number, bytes: Buffer.concat(pending) };
  } finally {
    await handle.close();
  }
}
