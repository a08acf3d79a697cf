import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `bin/inferlab ARGS` of this checkout, or of another copy of the app rooted at `appRoot`. */
export function startInferlab(args: string[], env: NodeJS.ProcessEnv = {}, appRoot = projectRoot()): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [path.join(appRoot, 'bin', 'inferlab'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Runs `./bin/inferlab ARGS` to completion. */
export function inferlab(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = startInferlab(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * Runs `./bin/inferlab ARGS --db DB --json`, which must succeed (its stderr is the failure's
 * message), and returns the JSON it printed.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as JSON.parse: the test that reads the document checks its shape
export async function inferlabJson<T = any>(args: string[], db: string, env: NodeJS.ProcessEnv = {}): Promise<T> {
  const result = await inferlab([...args, '--db', db, '--json'], env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** Resolves with the first stdout JSON line that satisfies `match`. */
export function waitForJsonLine(
  child: ChildProcessWithoutNullStreams,
  match: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (match(parsed)) {
          child.stdout.off('data', onData);
          resolve(parsed);
        }
      }
    };
    child.stdout.on('data', onData);
    child.once('close', (code) => reject(new Error(`inferlab exited (${code}) before the expected line`)));
  });
}

/** Pids whose parent is `pid` (Linux /proc). */
export function childPids(pid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid ? [Number(entry)] : [];
      } catch {
        return [];
      }
    });
}

/**
 * SIGKILLs a CLI together with its orphan watchdog, leaving its servers truly orphaned: what
 * a power cut of the process tree short of the servers would do. Servers are in groups of
 * their own, so only the helper (a `node -e` child) is taken along.
 */
export async function killWithWatchdog(child: ChildProcessWithoutNullStreams): Promise<void> {
  const helpers = childPids(child.pid!).filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('-e');
    } catch {
      return false;
    }
  });
  if (helpers.length === 0) throw new Error(`no orphan watchdog found under pid ${child.pid}`);
  for (const pid of helpers) process.kill(pid, 'SIGKILL');
  const closed = new Promise((resolve) => child.on('close', resolve));
  child.kill('SIGKILL');
  await closed;
}
