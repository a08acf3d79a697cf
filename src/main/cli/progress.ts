import type { BuildProgress } from '../services/engine-service';
import { writeControl } from './terminal-text';

/**
 * Build progress on stderr. On a terminal one line is rewritten in place; elsewhere (npm's
 * install log, CI) a line is printed every 5 percent so the log stays readable.
 */
export function stderrBuildProgress(prefix = 'inferlab setup'): BuildProgress {
  const tty = process.stderr.isTTY === true;
  const started = Date.now();
  let stepLabel = '';
  let lastPrinted = -5;
  const elapsed = () => {
    const seconds = Math.round((Date.now() - started) / 1000);
    return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  };
  return {
    step(index, total, label) {
      stepLabel = `[${index}/${total}] ${label}`;
      lastPrinted = -5;
      if (tty) process.stderr.write('\n');
      process.stderr.write(`${prefix}: ${stepLabel} (${elapsed()})\n`);
    },
    percent(value) {
      if (tty) {
        writeControl(process.stderr, '\r', `${prefix}: ${stepLabel}: ${String(value).padStart(3)}% (${elapsed()})`);
      } else if (value >= lastPrinted + 5 || (value === 100 && lastPrinted !== 100)) {
        lastPrinted = value;
        process.stderr.write(`${prefix}: ${stepLabel}: ${value}% (${elapsed()})\n`);
      }
    },
    info(line) {
      process.stderr.write(`${tty ? '\n' : ''}${prefix}: ${line}\n`);
    },
  };
}

export interface ProgressStream {
  isTTY?: boolean;
  write(chunk: string): boolean;
}

export interface ProgressWriter {
  /** A status line, always printed. */
  line(text: string): void;
  /** A counter that changes often: rewritten in place on a terminal, a plain line every few seconds elsewhere. */
  live(text: string): void;
  /** Ends a live line left open on a terminal. */
  end(): void;
}

/**
 * Progress for long commands. Logs that are not terminals (CI, `2>file`) still get every
 * status line, but no carriage returns and no more than one counter line per interval.
 */
export function progressWriter(
  stream: ProgressStream = process.stderr,
  options: { intervalMs?: number; now?: () => number } = {},
): ProgressWriter {
  const tty = stream.isTTY === true;
  const intervalMs = options.intervalMs ?? 5000;
  const now = options.now ?? Date.now;
  let liveOpen = false;
  let lastLive = -Infinity;
  return {
    line(text) {
      stream.write(`${liveOpen ? '\n' : ''}${text}\n`);
      liveOpen = false;
    },
    live(text) {
      if (tty) {
        writeControl(stream, '\r', text, '\x1b[K');
        liveOpen = true;
      } else if (now() - lastLive >= intervalMs) {
        lastLive = now();
        stream.write(`${text}\n`);
      }
    },
    end() {
      if (liveOpen) stream.write('\n');
      liveOpen = false;
    },
  };
}

/**
 * One run's progress as a line: done of total, failures, the last TTFT, and the time left —
 * from the pace so far when a count ends the run, from the clock when a duration does.
 */
export function runProgressLine(
  progress: {
    finished: number;
    failed: number;
    warmup: boolean;
    total: number | null;
    durationMs: number | null;
    lastTtftMs: number | null;
  },
  elapsedMs: number,
): string {
  const done = progress.total === null ? `${progress.finished} done` : `${progress.finished}/${progress.total} done`;
  const ttft = progress.lastTtftMs === null ? '—' : `${progress.lastTtftMs.toFixed(progress.lastTtftMs < 10 ? 2 : 1)} ms`;
  let left: number | null = null;
  if (progress.total !== null && progress.finished > 0) left = (elapsedMs / progress.finished) * (progress.total - progress.finished);
  else if (progress.durationMs !== null && !progress.warmup) left = Math.max(0, progress.durationMs - elapsedMs);
  const eta = left === null ? '' : `, about ${formatDuration(left)} left`;
  return `${progress.warmup ? 'warmup: ' : ''}${done}, ${progress.failed} failed, last TTFT ${ttft}${eta}`;
}

function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}
