import { spawn, type ChildProcess } from 'node:child_process';
import { childEnvironment, withEnvChanges, type EnvChanges } from './child-env';
import { LineSplitter, LogTail } from './log-tail';
import { orphanWatchdog } from './orphan-watchdog';
import type { Disposable } from './disposable';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ManagedProcessOptions {
  /** The environment to start from (the user's by default); credentials are withheld from it (child-env.ts). */
  env?: NodeJS.ProcessEnv;
  /** Withheld names this child legitimately uses. */
  keepCredentials?: (name: string) => boolean;
  /** Variables the child must have, added after the filter (the managed server's own key), or withheld (null). */
  grantedEnv?: EnvChanges;
  cwd?: string;
  /** Lines kept in memory from stdout and stderr together. */
  logCapacity?: number;
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
}

/**
 * A child process started from an argv array (never a shell), in its own process group
 * so that stopping it also stops anything it started. Both pipes are always drained:
 * a full pipe would block the child and look like a hang.
 */
export class ManagedProcess implements Disposable {
  readonly logs: LogTail;
  readonly exited: Promise<ProcessExit>;
  readonly startedAt = Date.now();
  private readonly child: ChildProcess;
  private exit: ProcessExit | undefined;

  constructor(
    readonly binary: string,
    readonly args: readonly string[],
    options: ManagedProcessOptions = {},
  ) {
    this.logs = new LogTail(options.logCapacity ?? 500);
    this.child = spawn(binary, [...args], {
      cwd: options.cwd,
      env: withEnvChanges(childEnvironment(options.env ?? process.env, options.keepCredentials), options.grantedEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
      shell: false,
    });
    const attach = (stream: NodeJS.ReadableStream | null, name: 'stdout' | 'stderr') => {
      if (!stream) return;
      stream.setEncoding('utf8');
      const splitter = new LineSplitter((line) => {
        this.logs.push(line);
        options.onLine?.(line, name);
      });
      stream.on('data', (chunk: string) => splitter.write(chunk));
      stream.on('end', () => splitter.flush());
    };
    const group = process.platform !== 'win32' ? this.child.pid : undefined;
    if (group !== undefined) orphanWatchdog.guard(group);
    attach(this.child.stdout, 'stdout');
    attach(this.child.stderr, 'stderr');
    this.exited = new Promise<ProcessExit>((resolve) => {
      this.child.once('error', (error) => {
        this.logs.push(`spawn failed: ${error.message}`);
        this.exit ??= { code: null, signal: null };
        resolve(this.exit);
      });
      this.child.once('close', (code, signal) => {
        if (group !== undefined) orphanWatchdog.release(group);
        this.exit ??= { code, signal };
        resolve(this.exit);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get hasExited(): boolean {
    return this.exit !== undefined;
  }

  /** Sends a signal to the whole process group (falls back to the child alone). */
  signal(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exit) return;
    try {
      if (process.platform !== 'win32') process.kill(-pid, signal);
      else this.child.kill(signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        // Already gone: the exit event settles `exited`.
      }
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process has exited. */
  async stop(graceMs = 8000): Promise<ProcessExit> {
    if (this.exit) return this.exit;
    // A stopped (SIGSTOPped, hung-in-debugger) process cannot act on SIGTERM until continued.
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.signal('SIGKILL');
        resolve();
      }, graceMs);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    return this.exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
  }
}

/** Runs a command to completion, collecting its output. For short tool invocations. */
export async function runToCompletion(
  binary: string,
  args: readonly string[],
  options: ManagedProcessOptions & { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<ProcessExit & { output: string }> {
  const lines: string[] = [];
  const child = new ManagedProcess(binary, args, {
    ...options,
    logCapacity: 5000,
    onLine: (line, stream) => {
      lines.push(line);
      options.onLine?.(line, stream);
    },
  });
  let timer: NodeJS.Timeout | undefined;
  if (options.timeoutMs) timer = setTimeout(() => void child.stop(2000), options.timeoutMs);
  const cancel = () => void child.stop(2000);
  options.signal?.addEventListener('abort', cancel, { once: true });
  if (options.signal?.aborted) cancel();
  const exit = await child.exited;
  clearTimeout(timer);
  options.signal?.removeEventListener('abort', cancel);
  return { ...exit, output: lines.join('\n') };
}
