import crypto from 'node:crypto';
import { openRegularFile } from './read-capped';

/**
 * sha256 of a file, streamed so large models never sit in memory. Only a regular file is read:
 * a FIFO would hold a thread of libuv's pool until someone wrote to it.
 */
export async function sha256File(file: string, onBytes?: (bytes: number) => void): Promise<string> {
  const { handle } = await openRegularFile(file, 'the file to hash');
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    // The stream closes the handle when it ends or fails.
    handle
      .createReadStream({ highWaterMark: 1 << 22 })
      .on('data', (chunk) => {
        hash.update(chunk);
        onBytes?.(chunk.length);
      })
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}
