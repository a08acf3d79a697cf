// Loads the built desktop main process with the stand-in electron, watching every native
// module load; drives it to a ready window, checks the address it loads, then quits.
import { createRequire } from 'node:module';
import path from 'node:path';

const natives = [];
const originalDlopen = process.dlopen;
process.dlopen = function (module, filename, ...rest) {
  natives.push(filename);
  return originalDlopen.call(this, module, filename, ...rest);
};
const Module = createRequire(import.meta.url)('node:module');
const originalLoad = Module._load;
Module._load = function (request, ...rest) {
  if (request.endsWith('.node') || request === 'better-sqlite3' || request === 'bindings') natives.push(request);
  return originalLoad.call(this, request, ...rest);
};

const [root] = process.argv.slice(2);
await import(path.join(root, 'out', 'main', 'index.js'));
const { app } = await import('electron');
const recorded = globalThis.__electronStub;
const deadline = Date.now() + 60_000;
while (recorded.loaded.length === 0 && recorded.errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
const url = recorded.loaded[0] ?? null;
let status = null;
let unauthorized = null;
if (url?.startsWith('http')) {
  status = (await fetch(url, { redirect: 'manual' })).status;
  unauthorized = (await fetch(new URL('/', url), { redirect: 'manual' })).status;
}
app.quit();
while (!recorded.quit && Date.now() < deadline + 30_000) await new Promise((r) => setTimeout(r, 50));
process.stdout.write(
  `${JSON.stringify({ url, status, unauthorized, natives, errors: recorded.errors, quit: recorded.quit, csp: recorded.csp, permission: recorded.permission, openHandler: recorded.openHandler, webPreferences: recorded.options?.webPreferences })}\n`,
);
process.exit(0);
