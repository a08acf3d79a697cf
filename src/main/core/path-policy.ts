import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';

/** What a path is for; each kind has its own roots. */
export type PathKind = 'model' | 'workload' | 'text' | 'results';

/**
 * Which files a face may name. The CLI acts with the rights of the person at the shell and
 * may name any path; requests over RPC (a browser on `inferlab serve`, the desktop window)
 * may only name files under configured roots, so holding the UI does not mean reading
 * `~/.ssh` or truncating a file of one's choosing.
 */
export interface PathPolicy {
  readonly unrestricted: boolean;
  /**
   * The absolute path to use (see usablePath), or an error naming the roots. `file` need not exist
   * yet (an output). Asynchronous because resolving a path on a stalled mount must not hold the
   * service's one thread.
   */
  check(file: string, kind: PathKind): Promise<string>;
  roots(kind: PathKind): readonly string[];
  /**
   * Lets this face use one more file of a kind, for this process only: a file the person chose
   * in the desktop app's own file dialog, which no page can choose for them.
   */
  grant(file: string, kind: PathKind): Promise<void>;
}

export const unrestrictedPaths: PathPolicy = {
  unrestricted: true,
  check: async (file) => path.resolve(file),
  roots: () => [],
  grant: async () => undefined,
};

/** The real location of a path: symlinks resolved, for a file that does not exist yet its folder's. */
async function realLocation(file: string): Promise<string> {
  const absolute = path.resolve(file);
  let probe = absolute;
  const rest: string[] = [];
  for (;;) {
    try {
      return path.join(await fs.promises.realpath(probe), ...rest.reverse());
    } catch {
      const parent = path.dirname(probe);
      if (parent === probe) return absolute;
      rest.push(path.basename(probe));
      probe = parent;
    }
  }
}

/**
 * The path handed on after a check. Handing on the path as given would let a symlink in it be
 * swapped between the check and the use, so the checked real location is what is used. A model
 * keeps its own file name (the Hugging Face cache's snapshot names are symlinks to blobs named
 * by hash, and the name is what runs are labelled with) under its folder's real location:
 * swapping that last link needs write access to a folder inside the model roots.
 */
async function usablePath(file: string, real: string, kind: PathKind): Promise<string> {
  if (kind !== 'model') return real;
  const absolute = path.resolve(file);
  return path.join(await realLocation(path.dirname(absolute)), path.basename(absolute));
}

function isInside(child: string, root: string): boolean {
  const relative = path.relative(root, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

const KIND_LABELS: Record<PathKind, { noun: string; setting: string }> = {
  model: { noun: 'model file', setting: 'roots.models' },
  workload: { noun: 'workload file', setting: 'roots.workloads' },
  text: { noun: 'text file', setting: 'roots.workloads' },
  results: { noun: 'run export', setting: 'roots.results' },
};

export function rootedPaths(roots: Record<PathKind, readonly string[]>): PathPolicy {
  // Compared by real location both ways, so a symlink inside a root cannot point out of it.
  // Resolved on first use, not here, so that a root on a stalled mount holds no one's thread.
  const granted: Record<PathKind, string[]> = { model: [], workload: [], text: [], results: [] };
  const realRoots = new Map<PathKind, Promise<string[]>>();
  const realRootsOf = (kind: PathKind): Promise<string[]> => {
    let resolved = realRoots.get(kind);
    if (!resolved) realRoots.set(kind, (resolved = Promise.all(roots[kind].map(realLocation))));
    return resolved;
  };
  return {
    unrestricted: false,
    async check(file, kind) {
      if (typeof file !== 'string' || file.length === 0 || file.includes('\0'))
        throw new AppError(ErrorCode.InvalidInput, `a ${KIND_LABELS[kind].noun} path must be a non-empty string`);
      const real = await realLocation(file);
      const allowed = [...(await realRootsOf(kind)), ...granted[kind]];
      if (allowed.some((root) => isInside(real, root))) return usablePath(file, real, kind);
      throw new AppError(
        ErrorCode.Forbidden,
        `${file} is outside the folders this interface may use for a ${KIND_LABELS[kind].noun} (${roots[kind].join(', ') || 'none configured'}). ` +
          `Add its folder to "${KIND_LABELS[kind].setting}" in the config file, or use the CLI, which may name any path.`,
        { kind, roots: roots[kind] },
      );
    },
    roots: (kind) => roots[kind],
    async grant(file, kind) {
      if (typeof file !== 'string' || !path.isAbsolute(file) || file.includes('\0'))
        throw new AppError(ErrorCode.InvalidInput, `a granted ${KIND_LABELS[kind].noun} must be an absolute path`);
      // The file itself, never its folder: choosing one model does not open its neighbours.
      granted[kind].push(await realLocation(file));
    },
  };
}
