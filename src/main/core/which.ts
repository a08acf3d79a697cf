import fs from 'node:fs';
import path from 'node:path';

/** Finds an executable on PATH (or checks an explicit path), like `command -v`. */
export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  if (name.includes(path.sep)) return isExecutable(name) ? path.resolve(name) : null;
  const extensions = process.platform === 'win32' ? ['', '.exe', '.cmd'] : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    for (const extension of extensions) {
      const candidate = path.join(dir, name + extension);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return null;
}

export function isExecutable(file: string): boolean {
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
