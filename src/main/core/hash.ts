import crypto from 'node:crypto';
import { Cancelled, throwIfCancelled } from './errors';
import { openRegularFile } from './read-capped';

/**
 * sha256 of a file, streamed so large models never sit in memory. Only a regular file is read:
 * a FIFO would hold a thread of libuv's pool until someone wrote to it. Aborting `signal` stops
 * the reading (a model of 100 GB takes a minute) and rejects with Cancelled.
 */
export async function sha256File(file: string, onBytes?: (bytes: number) => void, signal?: AbortSignal): Promise<string> {
  throwIfCancelled(signal, 'cancelled while hashing the model file');
  const { handle } = await openRegularFile(file, 'the file to hash');
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    // The stream closes the handle when it ends, fails or is destroyed.
    const stream = handle.createReadStream({ highWaterMark: 1 << 22 });
    const stop = () => stream.destroy(new Cancelled('cancelled while hashing the model file'));
    if (signal?.aborted) stop();
    signal?.addEventListener('abort', stop, { once: true });
    const settle = () => signal?.removeEventListener('abort', stop);
    stream
      .on('data', (chunk) => {
        hash.update(chunk);
        onBytes?.(chunk.length);
      })
      .on('error', (error) => {
        settle();
        reject(error);
      })
      .on('end', () => {
        settle();
        resolve(hash.digest('hex'));
      });
  });
}
