/** What several bench steps start: the SSE load target in a process of its own, and Chromium. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { chromium, type Browser } from 'playwright-core';

const here = path.dirname(new URL(import.meta.url).pathname);

/** A bench server script of this folder in a process of its own; resolves with the base URL it prints once listening. */
export function startBenchServer(script: string, args: string[]): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    readline.createInterface({ input: child.stdout! }).once('line', (url) => resolve({ url, stop: () => child.kill('SIGTERM') }));
  });
}

/**
 * The load target (sse-load-target.ts) answering every request with `tokens` tokens, one each
 * `intervalMs`; 0 writes the request's max_tokens at once.
 */
export function startLoadTarget(tokens: number, intervalMs: number): Promise<{ url: string; stop(): void }> {
  return startBenchServer('sse-load-target.ts', [String(tokens), String(intervalMs)]);
}

/** Chromium as the UI rows measure it: no GPU, no background traffic that would land in a timing. */
export function launchBenchBrowser(executablePath: string): Promise<Browser> {
  return chromium.launch({
    executablePath,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
