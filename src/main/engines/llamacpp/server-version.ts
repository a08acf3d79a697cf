import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keptReading } from '../../core/kept-reading';
import { userCacheDir } from '../../core/paths';
import { runToCompletion } from '../../core/process';

export interface ServerVersion {
  version: string | null;
  commit: string | null;
}

/**
 * `llama-server --version` loads the binary and its libraries (0.1–0.2 s on two cores, more with
 * GPU libraries), and every command that starts a server names the engine it ran. The answer
 * changes only when the binary or a library beside it does, so it is kept per binary under a key
 * made of every file in the binary's folder (name, inode, size, modification and status-change
 * times): a rebuild, an update or a swapped library reads the version again.
 */
const VERSION_KEEP_MS = 24 * 60 * 60_000;

function folderKey(serverPath: string): string | null {
  const folder = path.dirname(serverPath);
  const hash = crypto.createHash('sha256').update(path.resolve(serverPath));
  try {
    for (const name of fs.readdirSync(folder).sort()) {
      const stat = fs.statSync(path.join(folder, name), { throwIfNoEntry: false });
      if (stat) hash.update(`\n${name} ${stat.ino} ${stat.size} ${stat.mtimeMs} ${stat.ctimeMs}`);
    }
  } catch {
    return null;
  }
  return hash.digest('hex');
}

const isServerVersion = (value: unknown): value is ServerVersion =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as ServerVersion).version === 'string' &&
  ((value as ServerVersion).commit === null || typeof (value as ServerVersion).commit === 'string');

/** Reads the version line and commit from `llama-server --version`. */
async function askServerVersion(serverPath: string): Promise<ServerVersion> {
  const result = await runToCompletion(serverPath, ['--version'], { timeoutMs: 10_000 });
  const line = result.output.split('\n').find((text) => text.startsWith('version:')) ?? null;
  // Older builds print "version: 1 (80fb11a)", newer ones "(build 1, commit 80fb11a)".
  const commit = line ? (/(?:commit |\()([0-9a-f]{7,40})\)/.exec(line)?.[1] ?? null) : null;
  return { version: line, commit };
}

class NoVersionLine extends Error {}

/** The version of the llama-server at `serverPath`, kept (see above) once it printed one. */
export async function readServerVersion(serverPath: string, cacheDir = userCacheDir()): Promise<ServerVersion> {
  const key = folderKey(serverPath);
  if (key === null) return askServerVersion(serverPath);
  try {
    return await keptReading({
      file: path.join(cacheDir, 'server-versions.json'),
      key,
      keepMs: VERSION_KEEP_MS,
      maxBytes: 64 * 1024,
      isValue: isServerVersion,
      read: async () => {
        const answer = await askServerVersion(serverPath);
        // A binary that printed no version line (it failed to start, or timed out) is asked again next time.
        if (answer.version === null) throw new NoVersionLine();
        return answer;
      },
    });
  } catch (error) {
    if (error instanceof NoVersionLine) return { version: null, commit: null };
    throw error;
  }
}
