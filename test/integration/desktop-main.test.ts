import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { DESKTOP_CONTENT_SECURITY_POLICY } from '../../src/main/desktop-shell';
import { writeValidTinyModel } from '../support/hostile-gguf';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const root = projectRoot();
const stub = path.join(root, 'test', 'support', 'electron-stub');

/**
 * The built desktop main process (out/main, as Electron would run it) on plain Node, with a
 * stand-in `electron` module: it must start the window over the local service without loading
 * any native module, since better-sqlite3 is built for this Node and not for Electron.
 */
describe('the desktop main process', () => {
  it('opens its window on the local service, loads no native module, and stops the service on quit', () => {
    expect(fs.existsSync(path.join(root, 'out', 'main', 'index.js')), 'run npm run build first').toBe(true);
    const dataDir = tempDir();
    // A model outside every model folder, and its neighbour, for the file dialog.
    const elsewhere = tempDir();
    const chosen = path.join(elsewhere, 'chosen.gguf');
    writeValidTinyModel(chosen);
    writeValidTinyModel(path.join(elsewhere, 'neighbour.gguf'));
    const result = spawnSync(process.execPath, ['--import', path.join(stub, 'register.mjs'), path.join(stub, 'harness.mjs'), root], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: {
        ...process.env,
        INFERLAB_NODE: process.execPath,
        INFERLAB_DATA_DIR: dataDir,
        INFERLAB_DB: path.join(dataDir, 'desktop.db'),
        ELECTRON_STUB_CHOSEN_FILE: chosen,
        ELECTRON_STUB_NEIGHBOUR_FILE: path.join(elsewhere, 'neighbour.gguf'),
      },
    });
    expect(result.status, result.stderr).toBe(0);
    const outcome = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
    expect(outcome.errors).toEqual([]);
    expect(outcome.natives).toEqual([]);
    expect(outcome.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32}$/);
    // The credential opens the service; the bare address is refused.
    expect(outcome.status).toBe(200);
    expect(outcome.unauthorized).toBe(401);
    expect(outcome.csp).toEqual([DESKTOP_CONTENT_SECURITY_POLICY]);
    expect(outcome.permission).toBe(false);
    expect(outcome.openHandler).toEqual({ action: 'deny' });
    expect(outcome.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false, devTools: false });
    expect(outcome.grants).toMatchObject({
      before: 'forbidden',
      foreignPage: expect.stringMatching(/refused: not a page of the local service/),
      afterForeignPage: 'forbidden',
      returned: chosen,
      after: 'ok',
      neighbour: 'forbidden',
      dialogOptions: { properties: ['openFile'] },
    });
    expect(outcome.quit).toBe(true);
    // The service (and anything it started) is gone once the app has quit.
    const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout;
    expect(ps.split('\n').filter((line) => line.includes('serve --window'))).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, 'desktop.db'))).toBe(true);

    // The next launch comes back on the same port (the page keeps its theme per origin), with a new credential.
    const again = spawnSync(process.execPath, ['--import', path.join(stub, 'register.mjs'), path.join(stub, 'harness.mjs'), root], {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, INFERLAB_NODE: process.execPath, INFERLAB_DATA_DIR: dataDir, INFERLAB_DB: path.join(dataDir, 'desktop.db') },
    });
    expect(again.status, again.stderr).toBe(0);
    const second = JSON.parse(again.stdout.trim().split('\n').at(-1)!);
    expect(new URL(second.url).port).toBe(new URL(outcome.url).port);
    expect(new URL(second.url).searchParams.get('token')).not.toBe(new URL(outcome.url).searchParams.get('token'));
  }, 150_000);
});
