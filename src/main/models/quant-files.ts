import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { openRegularFile } from '../core/read-capped';

export interface QuantFile {
  name: string;
  file: string;
}

type QuantFileEntry = { name: string; file: string; entry?: string };

/**
 * `--files NAME=PATH,NAME=PATH,...`: explicit files to compare, the first the baseline. Any two
 * GGUF files will do (two quantizers' Q4_K_M, a file and a copy of itself). Only the flag's
 * syntax and names are checked here; the files themselves by checkQuantFiles, for every face.
 */
export function parseQuantFiles(raw: string, flag = '--files'): QuantFileEntry[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const match = /^([^=]+)=(.+)$/.exec(entry);
      if (!match) throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}" is not NAME=PATH`);
      return { name: match[1]!.trim(), file: match[2]!.trim(), entry };
    });
  checkQuantFileNames(entries, flag, raw);
  return entries;
}

/** Two or more entries with unique names; errors name the flag and the entry. */
function checkQuantFileNames(entries: QuantFileEntry[], flag: string, raw = ''): void {
  if (entries.length < 2)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${flag} needs two or more NAME=PATH entries, the first the baseline${raw ? `; got "${raw}"` : ''}`,
    );
  const seen = new Set<string>();
  for (const { name, file, entry = `${name}=${file}` } of entries) {
    if (!/^[\w.+-]+$/.test(name))
      throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": the name may hold letters, digits and . _ + - only`);
    if (seen.has(name)) throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": the name ${name} is used twice`);
    seen.add(name);
  }
}

/** The entries' names as checkQuantFileNames does, and each path an existing GGUF file, read without blocking the caller's thread. */
export async function checkQuantFiles(entries: QuantFileEntry[], flag = 'files'): Promise<QuantFile[]> {
  checkQuantFileNames(entries, flag);
  const files: QuantFile[] = [];
  for (const { name, file: given, entry = `${name}=${given}` } of entries) {
    const file = path.resolve(given);
    const magic = Buffer.alloc(4);
    const { handle } = await openRegularFile(file, `${flag} entry "${entry}"`).catch((error: AppError) => {
      throw error.code === ErrorCode.NotFound
        ? new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": no file at ${file}`)
        : error;
    });
    try {
      await handle.read(magic, 0, 4, 0);
    } finally {
      await handle.close();
    }
    if (magic.toString('latin1') !== 'GGUF')
      throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": ${file} is not a GGUF file`);
    files.push({ name, file });
  }
  return files;
}
