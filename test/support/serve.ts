import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { startInferlab } from './cli';

/** `inferlab serve` as a child process; resolves with the URL it prints. */
export async function startServe(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  appRoot?: string,
): Promise<{ url: string; child: ChildProcessWithoutNullStreams; stderr(): string; stop(): Promise<number | null> }> {
  const child = startInferlab(['serve', ...args], env, appRoot);
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const line = stdout.split('\n').find((text) => text.startsWith('http://'));
      if (line) resolve(line.trim());
    });
    child.once('close', (code) => reject(new Error(`inferlab serve exited (${code}): ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    url,
    child,
    stderr: () => stderr,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}
