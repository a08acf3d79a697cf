import fs from 'node:fs';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { identify, isAlive, type ProcessIdentity } from '../../core/process-identity';

/** A held claim on one blob's download; release it when the download ends, however it ends. */
export interface DownloadLock {
  release(): Promise<void>;
}

function holderOf(lockPath: string): ProcessIdentity | null {
  try {
    const held = JSON.parse(fs.readFileSync(lockPath, 'utf8')) as Partial<ProcessIdentity>;
    return typeof held.pid === 'number'
      ? { pid: held.pid, startTicks: typeof held.startTicks === 'number' ? held.startTicks : null }
      : null;
  } catch {
    return null;
  }
}

/**
 * Claims the download of one blob for this process: two pulls appending to the same
 * `.incomplete` file (the app's and a shell's, or two browser tabs') would interleave their
 * bytes. The claim is a file beside the partial one naming its process; a claim whose process
 * has exited (a crash, a killed shell) is taken over.
 */
export async function lockDownload(partialPath: string, file: string): Promise<DownloadLock> {
  const lockPath = `${partialPath}.lock`;
  const claim = JSON.stringify(identify(process.pid));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fs.promises.writeFile(lockPath, claim, { flag: 'wx' });
      return { release: () => fs.promises.rm(lockPath, { force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(lockPath);
    // Unreadable means a claim being written this instant: treat it as held.
    if (holder === null || isAlive(holder))
      throw new AppError(
        ErrorCode.RequestFailed,
        `${file} is being downloaded by another pull${holder ? ` (process ${holder.pid})` : ''}: wait for it to finish, then pull again (the file will be in the cache); if no pull is running, delete ${lockPath}`,
      );
    await fs.promises.rm(lockPath, { force: true });
  }
  throw new AppError(ErrorCode.RequestFailed, `${file}: another pull keeps claiming its download; try again in a moment`);
}
