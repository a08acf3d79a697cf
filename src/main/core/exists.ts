import fs from 'node:fs';

/*
 * Existence checks for paths a request names, on Node's I/O pool: a stat on a stalled network
 * mount then delays only the call that named it, never the service's one thread.
 */

export async function pathExists(file: string): Promise<boolean> {
  return fs.promises.access(file).then(
    () => true,
    () => false,
  );
}

export async function isFolder(file: string): Promise<boolean> {
  return fs.promises.stat(file).then(
    (stat) => stat.isDirectory(),
    () => false,
  );
}
