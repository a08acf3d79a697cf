import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { openRegularFile } from '../core/read-capped';

export interface QuantFile {
  name: string;
  file: string;
}

/**
 * `--files NAME=PATH,NAME=PATH,...`: explicit files to compare, the first the baseline.
 * Any two GGUF files will do (two quantizers' Q4_K_M, a file and a copy of itself).
 */
export function parseQuantFiles(raw: string, flag = '--files'): QuantFile[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return checkQuantFiles(
    entries.map((entry) => {
      const match = /^([^=]+)=(.+)$/.exec(entry);
      if (!match) throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}" is not NAME=PATH`);
      return { name: match[1]!.trim(), file: match[2]!.trim(), entry };
    }),
    flag,
    raw,
  );
}

/** Two or more entries, unique names, each path an existing GGUF file; errors name the flag and the entry. */
export function checkQuantFiles(entries: { name: string; file: string; entry?: string }[], flag = 'files', raw = ''): QuantFile[] {
  if (entries.length < 2)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${flag} needs two or more NAME=PATH entries, the first the baseline${raw ? `; got "${raw}"` : ''}`,
    );
  const files: QuantFile[] = [];
  for (const { name, file: given, entry = `${name}=${given}` } of entries) {
    if (!/^[\w.+-]+$/.test(name))
      throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": the name may hold letters, digits and . _ + - only`);
    if (files.some((file) => file.name === name))
      throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": the name ${name} is used twice`);
    const file = path.resolve(given);
    if (!fs.existsSync(file) || !fs.statSync(file).isFile())
      throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": no file at ${file}`);
    const magic = Buffer.alloc(4);
    const { fd } = openRegularFile(file, `${flag} entry "${entry}"`);
    try {
      fs.readSync(fd, magic, 0, 4, 0);
    } finally {
      fs.closeSync(fd);
    }
    if (magic.toString('latin1') !== 'GGUF')
      throw new AppError(ErrorCode.InvalidInput, `${flag} entry "${entry}": ${file} is not a GGUF file`);
    files.push({ name, file });
  }
  return files;
}
