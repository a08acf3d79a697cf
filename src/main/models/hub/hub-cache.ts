import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The Hugging Face cache as the hub's own tools lay it out, so a pulled file is shared with
 * llama.cpp, Python tools and LM Studio's scan:
 *   HUB/models--OWNER--REPO/blobs/<sha256>          the bytes, named by their content
 *   HUB/models--OWNER--REPO/snapshots/<commit>/PATH a relative link to the blob
 *   HUB/models--OWNER--REPO/refs/<revision>         the commit a branch or tag pointed at
 */
export function hubCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  const home = env.HF_HOME ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'huggingface');
  return path.join(home, 'hub');
}

/** A file's size, or null where there is none (a blob not downloaded yet). */
export function sizeOnDisk(file: string): number | null {
  try {
    return fs.statSync(file).size;
  } catch {
    return null;
  }
}

export const COMMIT_HASH = /^[0-9a-f]{40}$/;
export const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * A repository path from the hub's listing, checked before it names a file on disk: the listing
 * comes from a server (or a mirror) this machine does not control.
 */
export function safeRepoPath(file: string): boolean {
  if (!file || file.length > 1000 || file.includes('\\') || file.includes('\0') || file.startsWith('/')) return false;
  return file.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

export interface RepoCache {
  root: string;
  blob(sha256: string): string;
  /** Where a download grows until its SHA-256 is checked: beside the blobs, never in a snapshot, so no scan sees it. */
  partial(sha256: string): string;
  snapshot(commit: string, file?: string): string;
  ref(revision: string): string;
}

/**
 * A model repository's folder in that cache: "models--OWNER--REPO". Written out here rather than
 * taken from the hub library, which costs every command 50 ms to load.
 */
export function repoFolderName(repo: string): string {
  return ['models', ...repo.split('/')].join('--');
}

export function repoCache(cacheDir: string, repo: string): RepoCache {
  const root = path.join(cacheDir, repoFolderName(repo));
  return {
    root,
    blob: (sha256) => path.join(root, 'blobs', sha256),
    partial: (sha256) => path.join(root, 'blobs', `${sha256}.incomplete`),
    snapshot: (commit, file) => path.join(root, 'snapshots', commit, ...(file ? file.split('/') : [])),
    ref: (revision) => path.join(root, 'refs', ...revision.split('/')),
  };
}

/** Puts a verified blob in the snapshot: a relative link, as the hub's tools make (a copy where links are not allowed). */
export async function linkSnapshotFile(cache: RepoCache, commit: string, file: string, sha256: string): Promise<string> {
  const target = cache.snapshot(commit, file);
  const blob = cache.blob(sha256);
  await fs.promises.mkdir(path.dirname(target), { recursive: true });
  await fs.promises.rm(target, { force: true });
  try {
    await fs.promises.symlink(path.relative(path.dirname(target), blob), target);
  } catch {
    await fs.promises.copyFile(blob, target);
  }
  return target;
}

/** Records which commit a branch or tag named; a commit hash needs no ref. */
export async function writeRef(cache: RepoCache, revision: string, commit: string): Promise<void> {
  if (COMMIT_HASH.test(revision)) return;
  const file = cache.ref(revision);
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  await fs.promises.writeFile(file, commit);
}

/** The commit the cache last recorded for a revision, or null when this repository was never pulled at it. */
export async function cachedCommit(cache: RepoCache, revision: string): Promise<string | null> {
  if (COMMIT_HASH.test(revision)) return revision;
  try {
    const commit = (await fs.promises.readFile(cache.ref(revision), 'utf8')).trim();
    return COMMIT_HASH.test(commit) ? commit : null;
  } catch {
    return null;
  }
}
