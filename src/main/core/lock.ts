import fs from 'node:fs';
import path from 'node:path';

export interface FileLock {
  release(): void;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An exclusive lock held as a file containing the holder's pid. A lock whose holder is no
 * longer alive is stale and taken over, so a killed install never blocks the next one.
 */
export async function acquireFileLock(
  lockPath: string,
  options: { timeoutMs: number; pollMs?: number; onWait?: (holderPid: number) => void },
): Promise<FileLock> {
  fs.mkdirSync(path.dirname(lockPath), { recursive: true });
  const deadline = Date.now() + options.timeoutMs;
  let announced = false;
  for (;;) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, String(process.pid));
      fs.closeSync(fd);
      return {
        release: () => {
          try {
            if (fs.readFileSync(lockPath, 'utf8') === String(process.pid)) fs.unlinkSync(lockPath);
          } catch {
            // Already released.
          }
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = Number.parseInt(readOrEmpty(lockPath), 10);
    if (!Number.isFinite(holder) || !isAlive(holder)) {
      fs.rmSync(lockPath, { force: true });
      continue;
    }
    if (!announced) {
      options.onWait?.(holder);
      announced = true;
    }
    if (Date.now() > deadline) throw new Error(`Timed out waiting for the lock ${lockPath} held by pid ${holder}`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1000));
  }
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
