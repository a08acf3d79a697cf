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
const { app, ipcMain } = await import('electron');
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
// The file dialog: a file outside the model folders is refused over RPC until the person chooses it
// in the dialog, and then only that file; a page of another origin cannot open the dialog.
const grants = {};
if (url?.startsWith('http') && process.env.ELECTRON_STUB_CHOSEN_FILE) {
  const { default: WebSocket } = await import('ws');
  const token = new URL(url).searchParams.get('token');
  const socket = new WebSocket(`ws://${new URL(url).host}/rpc?token=${token}`);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let next = 1;
  const call = (service, method, ...args) =>
    new Promise((resolve) => {
      const id = next++;
      const onMessage = (data) => {
        const message = JSON.parse(data.toString());
        if (message.id !== id) return;
        socket.off('message', onMessage);
        resolve(message.ok ? 'ok' : message.error.code);
      };
      socket.on('message', onMessage);
      socket.send(JSON.stringify({ id, service, method, args }));
    });
  const chosen = process.env.ELECTRON_STUB_CHOSEN_FILE;
  const neighbour = process.env.ELECTRON_STUB_NEIGHBOUR_FILE;
  const handler = ipcMain.handlers.get('inferlab:choose-model-file');
  grants.before = await call('models', 'scan', [chosen]);
  grants.foreignPage = await handler({ senderFrame: { url: 'http://evil.example/' } }).then(
    () => 'answered',
    (error) => error.message,
  );
  grants.afterForeignPage = await call('models', 'scan', [chosen]);
  grants.returned = await handler({ senderFrame: { url: new URL('/', url).href } });
  grants.after = await call('models', 'scan', [chosen]);
  grants.neighbour = await call('models', 'scan', [neighbour]);
  grants.dialogOptions = recorded.dialogOptions;
  socket.close();
}
app.quit();
while (!recorded.quit && Date.now() < deadline + 30_000) await new Promise((r) => setTimeout(r, 50));
process.stdout.write(
  `${JSON.stringify({ url, status, unauthorized, natives, errors: recorded.errors, quit: recorded.quit, csp: recorded.csp, permission: recorded.permission, openHandler: recorded.openHandler, grants, webPreferences: recorded.options?.webPreferences })}\n`,
);
process.exit(0);
