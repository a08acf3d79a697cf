import { ErrorCode } from '../../shared/errors';
import type { EngineInfo } from '../../shared/contract/engine';
import type { Disposable } from '../core/disposable';
import { AppError } from '../core/errors';
import { findFreePort } from '../core/ports';
import { ManagedProcess } from '../core/process';
import { buildLlamaServerArgs, type LlamaServerSettings } from '../engines/llamacpp/launch-args';

export interface ReadyServer {
  baseUrl: string;
  port: number;
  pid: number;
  /** Milliseconds from spawn to the first /health 200. */
  readyMs: number;
}

const HEALTH_POLL_MS = 250;
const BIND_FAILURE = /couldn't bind|address already in use|failed to bind/i;
const LOAD_PROGRESS = /load_tensors|loading model|llama_model_loader|load_model|llama_context|warming up/i;

/**
 * One llama-server process: spawned from an argv array on a free loopback port, ready when
 * /health answers 200, raced against the process exiting (llama-server exits 0 on some
 * load failures, so any exit before ready is a failure). Stopping sends SIGTERM to the
 * process group, then SIGKILL after a grace period.
 */
export class LlamaServerProcess implements Disposable {
  private process: ManagedProcess | null = null;

  constructor(
    private readonly engine: EngineInfo,
    private readonly modelPath: string,
    private readonly settings: LlamaServerSettings,
    private readonly options: { stallTimeoutMs?: number; hardTimeoutMs?: number; onLine?: (line: string) => void } = {},
  ) {}

  get logs(): string {
    return this.process?.logs.text(40) ?? '';
  }

  get exited(): Promise<unknown> | null {
    return this.process?.exited ?? null;
  }

  async start(): Promise<ReadyServer> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.startOnce(await findFreePort());
      } catch (error) {
        // Another process can take the port between our probe and the server's bind.
        if (attempt < 3 && error instanceof AppError && error.details && (error.details as { bindFailure?: boolean }).bindFailure) continue;
        throw error;
      }
    }
  }

  private async startOnce(port: number): Promise<ReadyServer> {
    const args = buildLlamaServerArgs(this.modelPath, port, this.settings);
    let lastProgress = Date.now();
    const child = new ManagedProcess(this.engine.serverPath, args, {
      onLine: (line) => {
        if (LOAD_PROGRESS.test(line)) lastProgress = Date.now();
        this.options.onLine?.(line);
      },
    });
    this.process = child;
    const started = performance.now();
    const baseUrl = `http://127.0.0.1:${port}`;
    const stallTimeoutMs = this.options.stallTimeoutMs ?? 60_000;
    const hardDeadline = Date.now() + (this.options.hardTimeoutMs ?? 10 * 60_000);
    let exited = false;
    void child.exited.then(() => (exited = true));

    for (;;) {
      if (exited) {
        const exit = await child.exited;
        const tail = child.logs.text(25);
        throw new AppError(
          ErrorCode.ServerStartFailed,
          `llama-server exited before it was ready (exit code ${exit.code ?? 'none'}, signal ${exit.signal ?? 'none'}). Last log lines:\n${tail}`,
          { exitCode: exit.code, signal: exit.signal, bindFailure: BIND_FAILURE.test(tail), logTail: tail },
        );
      }
      if (await healthOk(baseUrl)) {
        return { baseUrl, port, pid: child.pid ?? -1, readyMs: performance.now() - started };
      }
      const now = Date.now();
      if (now - lastProgress > stallTimeoutMs || now > hardDeadline) {
        await child.stop(2000);
        const reason = now > hardDeadline ? 'did not become ready within the hard limit' : `showed no loading progress for ${Math.round(stallTimeoutMs / 1000)} s`;
        throw new AppError(ErrorCode.ServerStartFailed, `llama-server ${reason}; stopped it. Last log lines:\n${child.logs.text(25)}`);
      }
      await Promise.race([new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS)), child.exited]);
    }
  }

  async stop(graceMs = 8000): Promise<void> {
    await this.process?.stop(graceMs);
  }

  async dispose(): Promise<void> {
    await this.stop();
  }
}

async function healthOk(baseUrl: string): Promise<boolean> {
  try {
    const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}
