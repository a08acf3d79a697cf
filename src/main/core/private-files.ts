import fs from 'node:fs';

/**
 * Infer Lab's files hold prompts, outputs and access tokens, and the machines it runs on are
 * often shared: its folders are owner-only (0700) and its files 0600, whatever the umask.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates the folder and any missing parents owner-only. An existing folder is left as it
 * is: `--db ~/x.db` must not change the home folder's mode (the app's own folders are
 * tightened by `secureAppDirs`).
 */
export function ensurePrivateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** Tightens a file or folder we own; on a filesystem without modes (or someone else's file) there is nothing to do. */
export function restrict(target: string, mode: number): void {
  try {
    if ((fs.statSync(target).mode & 0o777) !== mode) fs.chmodSync(target, mode);
  } catch {
    // Not ours to change, or gone: the caller's own open or write reports what matters.
  }
}

/** Creates `file` owner-only and fails with EEXIST when it is already there, so two writers cannot both win. */
export function writePrivateFile(file: string, content: string): void {
  fs.writeFileSync(file, content, { flag: 'wx', mode: PRIVATE_FILE_MODE });
  restrict(file, PRIVATE_FILE_MODE);
}
