import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUserConfig, telemetryIntervalMs } from '../../src/main/core/config';
import { acquireFileLock } from '../../src/main/core/lock';
import { LineSplitter, LogTail } from '../../src/main/core/log-tail';
import { ManagedProcess } from '../../src/main/core/process';
import { identify, isAlive } from '../../src/main/core/process-identity';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('file lock', () => {
  it('makes a second holder wait until the first releases', async () => {
    const lockPath = path.join(tempDir(), 'build.lock');
    const first = await acquireFileLock(lockPath, { timeoutMs: 1000 });
    let waitedFor: number | null = null;
    const second = acquireFileLock(lockPath, { timeoutMs: 5000, pollMs: 20, onWait: (pid) => (waitedFor = pid) });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(waitedFor).toBe(process.pid);
    first.release();
    (await second).release();
    expect(fs.existsSync(lockPath)).toBe(false);
  });

  it('takes over a lock whose holder is dead', async () => {
    const lockPath = path.join(tempDir(), 'stale.lock');
    const child = new ManagedProcess(process.execPath, ['-e', '0']);
    await child.exited;
    fs.writeFileSync(lockPath, String(child.pid));
    const lock = await acquireFileLock(lockPath, { timeoutMs: 1000 });
    expect(fs.readFileSync(lockPath, 'utf8')).toBe(String(process.pid));
    lock.release();
  });

  it('times out with the holder named', async () => {
    const lockPath = path.join(tempDir(), 'held.lock');
    const held = await acquireFileLock(lockPath, { timeoutMs: 1000 });
    await expect(acquireFileLock(lockPath, { timeoutMs: 50, pollMs: 10 })).rejects.toThrow(`held by pid ${process.pid}`);
    held.release();
  });
});

describe('managed process', () => {
  it('drains output into the log tail and stops the whole process group with SIGTERM, grandchild included', async () => {
    // The child starts a grandchild of its own and prints its pid: stopping the child must stop both.
    const script =
      "const { spawn } = require('node:child_process'); const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.log('grandchild ' + g.pid); console.error('on stderr'); setInterval(() => {}, 1000)";
    const child = new ManagedProcess(process.execPath, ['-e', script]);
    while (child.logs.last().length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    const lines = child.logs.last().sort();
    expect(lines[0]).toMatch(/^grandchild \d+$/);
    expect(lines[1]).toBe('on stderr');
    const grandchild = identify(Number(lines[0]!.split(' ')[1]));
    expect(isAlive(identify(child.pid!))).toBe(true);
    expect(isAlive(grandchild)).toBe(true);
    const exit = await child.stop(2000);
    expect(exit.signal).toBe('SIGTERM');
    expect(isAlive(identify(child.pid!))).toBe(false);
    for (let i = 0; i < 40 && isAlive(grandchild); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(isAlive(grandchild)).toBe(false);
  });

  it('starts a child with the variables it is granted, and without those it must not inherit', async () => {
    const child = new ManagedProcess(
      process.execPath,
      ['-e', "console.log(JSON.stringify([process.env.ROCR_VISIBLE_DEVICES ?? 'unset', process.env.HIP_VISIBLE_DEVICES]))"],
      {
        env: { ...process.env, ROCR_VISIBLE_DEVICES: '2,3', HIP_VISIBLE_DEVICES: '1' },
        grantedEnv: { ROCR_VISIBLE_DEVICES: null, HIP_VISIBLE_DEVICES: '0' },
      },
    );
    await child.exited;
    expect(child.logs.last()).toEqual(['["unset","0"]']);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const child = new ManagedProcess(process.execPath, [
      '-e',
      "process.on('SIGTERM', () => {}); console.log('armed'); setInterval(() => {}, 1000)",
    ]);
    while (child.logs.last().length < 1) await new Promise((resolve) => setTimeout(resolve, 10));
    const exit = await child.stop(200);
    expect(exit.signal).toBe('SIGKILL');
  });

  it('reports a binary that cannot be spawned as an exit with the reason logged', async () => {
    const child = new ManagedProcess('/nonexistent/llama-server', []);
    const exit = await child.exited;
    expect(exit.code).toBeNull();
    expect(child.logs.text()).toMatch(/spawn failed: .*ENOENT/);
  });
});

describe('log tail', () => {
  it('keeps the last lines and joins split chunks', () => {
    const tail = new LogTail(2);
    const splitter = new LineSplitter((line) => tail.push(line));
    splitter.write('one\ntw');
    splitter.write('o\r\nthree\nfou');
    splitter.flush();
    expect(tail.last()).toEqual(['three', 'fou']);
  });
});

describe('user config', () => {
  it('names the file and the field when the config is wrong', () => {
    const dir = tempDir();
    const env = { INFERLAB_DATA_DIR: dir };
    expect(readUserConfig(env)).toEqual({});
    fs.writeFileSync(path.join(dir, 'config.json'), '{ not json');
    expect(() => readUserConfig(env)).toThrow(new RegExp(`${dir}/config.json: not valid JSON`));
    fs.writeFileSync(path.join(dir, 'config.json'), '{"engine": {"llamaServerPath": 3}}');
    expect(() => readUserConfig(env)).toThrow(/field "engine.llamaServerPath" must be a string/);
    fs.writeFileSync(path.join(dir, 'config.json'), '[]');
    expect(() => readUserConfig(env)).toThrow(/expected a JSON object/);
  });

  it("takes the telemetry interval from INFERLAB_TELEMETRY_INTERVAL_MS over the file's, and names the variable when it is wrong", () => {
    const dir = tempDir();
    const env: NodeJS.ProcessEnv = { INFERLAB_DATA_DIR: dir };
    expect(telemetryIntervalMs(env)).toBe(250);
    fs.writeFileSync(path.join(dir, 'config.json'), '{"telemetry": {"intervalMs": 500}}');
    expect(telemetryIntervalMs(env)).toBe(500);
    expect(telemetryIntervalMs({ ...env, INFERLAB_TELEMETRY_INTERVAL_MS: '100' })).toBe(100);
    // Empty counts as unset, as a shell's `VAR= command` means.
    expect(telemetryIntervalMs({ ...env, INFERLAB_TELEMETRY_INTERVAL_MS: '' })).toBe(500);
    for (const wrong of ['fast', '99', '10001', '1e3', '250.5', '-100'])
      expect(() => telemetryIntervalMs({ ...env, INFERLAB_TELEMETRY_INTERVAL_MS: wrong })).toThrow(
        /^INFERLAB_TELEMETRY_INTERVAL_MS must be a whole number of ms from 100 to 10000, got ".*"; unset it/,
      );
  });
});

describe('window state', () => {
  it('round-trips the window bounds and falls back to the default on a damaged file', async () => {
    const { loadWindowState, saveWindowState } = await import('../../src/main/window-state');
    const file = path.join(tempDir(), 'window-state.json');
    expect(loadWindowState(file)).toEqual({ width: 1280, height: 820, maximized: false });
    saveWindowState(file, { x: 10, y: 20, width: 900, height: 700, maximized: true });
    expect(loadWindowState(file)).toEqual({ x: 10, y: 20, width: 900, height: 700, maximized: true });
    fs.writeFileSync(file, '{"width": -5');
    expect(loadWindowState(file).width).toBe(1280);
  });
});
