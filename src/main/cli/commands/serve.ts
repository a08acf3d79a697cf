import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { userDataDir } from '../../core/paths';
import { startHeadlessServer } from '../../headless';
import { createServices } from '../../services';
import { parseOptions, type CommandHandler } from '../args';
import { builtAppFile } from '../built-app';
import { SERVE_USAGE as USAGE } from '../usage';
import { answerGrants } from '../../window-grants';

function rememberedPort(file: string): number[] {
  try {
    const port = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isInteger(port) && port >= 1024 && port <= 65535 ? [port] : [];
  } catch {
    return [];
  }
}

function rememberPort(file: string, port: number): void {
  try {
    fs.writeFileSync(file, `${port}\n`, { mode: 0o600 });
  } catch {
    // Only a convenience: the next launch takes a new port.
  }
}

export const serveCommand: CommandHandler = async (args, signal) => {
  const { values } = parseOptions(
    args,
    { host: { type: 'string' }, port: { type: 'string' }, db: { type: 'string' }, window: { type: 'boolean' } },
    USAGE,
  );
  // For the desktop window: loopback only, this launch's credential from the environment, and
  // the service ends when the app's end of stdin closes (the app quit or died).
  const forWindow = values.window === true;
  const windowToken = process.env.INFERLAB_WINDOW_TOKEN ?? '';
  // Read once; nothing this process starts later needs it.
  delete process.env.INFERLAB_WINDOW_TOKEN;
  if (forWindow && (values.host !== undefined || windowToken.length < 32))
    throw new AppError(
      ErrorCode.Usage,
      `--window is for the desktop app: it takes INFERLAB_WINDOW_TOKEN (32+ characters) and no --host\n\nUsage: ${USAGE}`,
    );
  const host = values.host ?? '127.0.0.1';
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new AppError(ErrorCode.Usage, `--port must be 0-65535, got "${values.port}"\n\nUsage: ${USAGE}`);
  const rendererDir = path.dirname(builtAppFile('renderer'));
  const container = await createServices({ dbPath: values.db });
  // The window comes back on the port it had last time when that port is free: the page keeps
  // its theme and selections per origin, and a new port would be a new origin.
  const windowPortFile = path.join(userDataDir(), 'window-port');
  const ports = forWindow && values.port === undefined ? [...rememberedPort(windowPortFile), 0] : [port];
  let server;
  for (const [index, candidate] of ports.entries()) {
    try {
      server = await startHeadlessServer({
        container,
        rendererDir,
        host,
        port: candidate,
        ...(forWindow ? { token: windowToken } : { tokenFile: path.join(userDataDir(), 'serve-token') }),
      });
      break;
    } catch (error) {
      if (index < ports.length - 1) continue;
      await container.dispose();
      throw new AppError(ErrorCode.InvalidInput, `Cannot listen on ${host}:${candidate}: ${(error as Error).message}`);
    }
  }
  if (!server) throw new AppError(ErrorCode.Internal, 'no port to listen on');
  if (forWindow && values.port === undefined) rememberPort(windowPortFile, server.port);
  // A fault in one request must not take down the service and the servers it manages: log it
  // and keep serving. Shutting down stays with the signal handlers.
  const onFault = (kind: string) => (error: unknown) =>
    process.stderr.write(`serve: ${kind}: ${(error as Error)?.stack ?? String(error)}\n`);
  const onRejection = onFault('unhandled rejection');
  const onException = onFault('uncaught exception');
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  process.stdout.write(`${server.url}\n`);
  if (!forWindow)
    process.stderr.write(
      'Open the URL above: it carries the access token (kept in the data folder, so it stays the same across restarts); requests without it are refused.\n',
    );
  try {
    await new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
      // The app's end of stdin also carries the files chosen in its file dialog.
      if (forWindow) void answerGrants(process.stdin, container.access.paths, (line) => process.stdout.write(line)).then(resolve);
    });
    await server.close();
    await container.dispose();
  } finally {
    // The app's end of stdin would keep this process alive after a SIGTERM.
    if (forWindow) process.stdin.destroy();
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  }
  return 0;
};
