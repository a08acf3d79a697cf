import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-files';

/** What a folder's manifest.json says it belongs to: a run's files, Parquet tables, something else, or nothing yet. */
export type ExportKind = 'run files' | 'Parquet tables' | 'unknown' | null;

/** The two export manifests tell themselves apart by a field only each has. */
async function manifestKind(folder: string): Promise<ExportKind> {
  const file = path.join(folder, 'manifest.json');
  let text: string;
  try {
    const stat = await fs.promises.lstat(file);
    // Larger than any real manifest, or not a plain file: not one this app wrote.
    if (!stat.isFile() || stat.size > 16 * 1024 * 1024) return 'unknown';
    text = await fs.promises.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    return 'unknown';
  }
  try {
    const manifest = JSON.parse(text) as Record<string, unknown> | null;
    if (typeof manifest?.run_id === 'string') return 'run files';
    if (Array.isArray(manifest?.tables)) return 'Parquet tables';
  } catch {
    // Not JSON: someone else's file.
  }
  return 'unknown';
}

/**
 * Refuses to write an export of one kind where its manifest.json would replace another's: the
 * folder's other export would be left without its manifest, and the person would not know.
 */
export async function refuseOtherExport(folder: string, kind: Exclude<ExportKind, 'unknown' | null>, remedy: string): Promise<void> {
  const found = await manifestKind(folder);
  if (found === null || found === kind) return;
  const what = found === 'unknown' ? 'a manifest.json this export did not write' : `the manifest.json of an export of ${found}`;
  throw new AppError(
    ErrorCode.InvalidInput,
    `${path.join(folder, 'manifest.json')}: ${folder} already holds ${what}, which this export of ${kind} would replace; nothing was written. ${remedy}.`,
    { file: path.join(folder, 'manifest.json') },
  );
}

/**
 * Writes an export's files into `folder`. A new folder is made owner-only (0700), as each file
 * is (0600): exports carry prompts and answers. Each file is written under a fresh name that is
 * created exclusively, so a link planted in the folder is never written through, and is given
 * its name by a rename once every file is whole, which replaces an entry, never what it points
 * to. A name taken by anything but a plain file (a link, a folder) is refused before anything
 * is written. Returns the files' paths.
 */
export async function writeExportFiles(folder: string, files: readonly { name: string; content: string }[]): Promise<string[]> {
  await fs.promises.mkdir(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
  for (const { name } of files) {
    const target = path.join(folder, name);
    const stat = await fs.promises.lstat(target).catch(() => null);
    if (stat && !stat.isFile())
      throw new AppError(
        ErrorCode.InvalidInput,
        `${target} is ${stat.isSymbolicLink() ? 'a symbolic link' : 'not a plain file'}; an export writes its own files and follows no link. ` +
          'Nothing was written: remove it, or choose another folder with --out',
        { file: target },
      );
  }
  const tag = crypto.randomBytes(6).toString('hex');
  const written: { partial: string; target: string }[] = [];
  try {
    for (const { name, content } of files) {
      const partial = path.join(folder, `.${name}.${tag}.partial`);
      written.push({ partial, target: path.join(folder, name) });
      await fs.promises.writeFile(partial, content, { flag: 'wx', mode: PRIVATE_FILE_MODE });
    }
    for (const { partial, target } of written) await fs.promises.rename(partial, target);
  } catch (error) {
    await Promise.all(written.map(({ partial }) => fs.promises.rm(partial, { force: true }).catch(() => {})));
    throw error;
  }
  return written.map(({ target }) => target);
}
