import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/main/core/paths';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function startInferlab(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcessWithoutNullStreams {
  return spawn(path.join(projectRoot(), 'bin', 'inferlab'), args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
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

/** Resolves with the first stdout JSON line that satisfies `match`. */
export function waitForJsonLine(child: ChildProcessWithoutNullStreams, match: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
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
