import fs from 'node:fs';
import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';

/** Workloads, ShareGPT imports and evaluation texts: large enough for real ones, small enough that one file cannot take the process's memory. */
export const MAX_INPUT_FILE_BYTES = 256 * 1024 * 1024;

function mib(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

/**
 * Reads a whole regular file, refusing it past `maxBytes`. Opened without blocking: opening a
 * FIFO that no one writes to would otherwise wait forever and freeze the process (the service
 * of `serve` included). What was opened is checked from its descriptor, so a FIFO, a device
 * such as /dev/zero or a socket is refused before any read, whatever the path pointed to
 * when looked at before; the size is checked again while reading, so a file that grows is
 * refused at the cap instead of read until memory runs out.
 */
export function readFileCapped(file: string, what: string, maxBytes = MAX_INPUT_FILE_BYTES): Buffer {
  const tooLarge = (size: string) =>
    new AppError(ErrorCode.InvalidInput, `${file}: ${what} is ${size}, over the ${mib(maxBytes)} (${maxBytes}-byte) limit`, {
      file,
      limitBytes: maxBytes,
    });
  const { fd, stat } = openRegularFile(file, what);
  try {
    if (stat.size > maxBytes) throw tooLarge(`${stat.size} bytes`);
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

/**
 * Opens a file for reading without blocking and refuses, from its descriptor, anything that is
 * not a regular file (see readFileCapped). The caller closes the descriptor.
 */
export function openRegularFile(file: string, what: string): { fd: number; stat: fs.Stats } {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new AppError(
      code === 'ENOENT' ? ErrorCode.NotFound : ErrorCode.InvalidInput,
      `${file}: ${what} ${code === 'ENOENT' ? 'not found' : `cannot be read (${(error as Error).message})`}`,
    );
  }
  const stat = fs.fstatSync(fd);
  const problem = stat.isDirectory()
    ? 'is a folder, not a file'
    : stat.isFile()
      ? null
      : `is ${specialKind(stat)}, not a regular file; save its contents to a file and give that file`;
  if (problem) {
    fs.closeSync(fd);
    throw new AppError(ErrorCode.InvalidInput, `${file}: ${what} ${problem}`);
  }
  return { fd, stat };
}

function specialKind(stat: fs.Stats): string {
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}

export function readTextFileCapped(file: string, what: string, maxBytes = MAX_INPUT_FILE_BYTES): string {
  return readFileCapped(file, what, maxBytes).toString('utf8');
}
