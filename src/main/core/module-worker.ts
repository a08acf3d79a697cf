import fs from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * Starts a worker thread on a module of src/main that is its own entry: as built, NAME.mjs
 * beside the CLI bundle (vite.cli.config.ts lists it; the caller's code may sit one folder
 * down, in chunks/), or, in a source checkout, NAME.ts beside the caller, loaded through tsx.
 * `callerUrl` is the caller's `import.meta.url`.
 */
export function startModuleWorker(name: string, callerUrl: string, options: WorkerOptions): Worker {
  if (callerUrl.endsWith('.ts')) {
    const entry = new URL(`${name}.ts`, callerUrl).href;
    const tsx = new URL('dist/esm/api/index.mjs', pathToFileURL(createRequire(import.meta.url).resolve('tsx/package.json'))).href;
    const bootstrap = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(bootstrap, { ...options, eval: true });
  }
  for (const candidate of [`${name}.mjs`, `../${name}.mjs`]) {
    const url = new URL(candidate, callerUrl);
    if (url.protocol === 'file:' && fs.existsSync(fileURLToPath(url))) return new Worker(url, options);
  }
  throw new Error(`the worker ${name}.mjs is missing beside ${fileURLToPath(callerUrl)}: rebuild the app (npm run build)`);
}
