import fs from 'node:fs';
import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';

/** Workloads, ShareGPT imports and evaluation texts: large enough for real ones, small enough that one file cannot take the process's memory. */
export const MAX_INPUT_FILE_BYTES = 256 * 1024 * 1024;

function mib(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

/**
 * Reads a whole file, refusing it past `maxBytes`. The size is checked from the open
 * descriptor and again while reading, so a file that grows, a FIFO or a device such as
 * /dev/zero is refused at the cap instead of read until memory runs out.
 */
export function readFileCapped(file: string, what: string, maxBytes = MAX_INPUT_FILE_BYTES): Buffer {
  const tooLarge = (size: string) =>
    new AppError(ErrorCode.InvalidInput, `${file}: ${what} is ${size}, over the ${mib(maxBytes)} (${maxBytes}-byte) limit`, {
      file,
      limitBytes: maxBytes,
    });
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AppError(
      code === 'ENOENT' ? ErrorCode.NotFound : ErrorCode.InvalidInput,
      `${file}: ${what} ${code === 'ENOENT' ? 'not found' : `cannot be read (${(error as Error).message})`}`,
    );
  }
  try {
    const stat = fs.fstatSync(fd);
    if (stat.isDirectory()) throw new AppError(ErrorCode.InvalidInput, `${file}: ${what} is a folder, not a file`);
    if (stat.isFile() && stat.size > maxBytes) throw tooLarge(`${stat.size} bytes`);
    const chunks: Buffer[] = [];
    let total = 0;
    const chunk = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const read = fs.readSync(fd, chunk, 0, Math.min(chunk.length, maxBytes + 1 - total), null);
      if (read === 0) break;
      total += read;
      if (total > maxBytes) throw tooLarge(`more than ${maxBytes} bytes`);
      chunks.push(Buffer.from(chunk.subarray(0, read)));
    }
    return Buffer.concat(chunks, total);
  } finally {
    fs.closeSync(fd);
  }
}

export function readTextFileCapped(file: string, what: string, maxBytes = MAX_INPUT_FILE_BYTES): string {
  return readFileCapped(file, what, maxBytes).toString('utf8');
}
