import type { BuildProgress } from '../engines/llamacpp/engine-build';

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
        process.stderr.write(`\r${prefix}: ${stepLabel}: ${String(value).padStart(3)}% (${elapsed()})`);
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
export function progressWriter(stream: ProgressStream = process.stderr, options: { intervalMs?: number; now?: () => number } = {}): ProgressWriter {
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
        stream.write(`\r${text}\x1b[K`);
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
