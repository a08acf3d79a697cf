import fs from 'node:fs';
import type { ProcessSample } from '../../shared/contract/telemetry';
import { readCpuSeconds } from './proc-stat';

const PAGE_SIZE = 4096;

/** The process and all its descendants, from /proc/<pid>/task/<tid>/children. */
export function processTree(pid: number): number[] {
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    let tasks: string[] = [];
    try {
      tasks = fs.readdirSync(`/proc/${found[i]}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      try {
        for (const child of fs.readFileSync(`/proc/${found[i]}/task/${task}/children`, 'utf8').trim().split(/\s+/))
          if (child) found.push(Number(child));
      } catch {
        // Task ended between the listing and the read.
      }
    }
  }
  return found;
}

function rssBytes(pid: number): number {
  try {
    const statm = fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ');
    return Number(statm[1]) * PAGE_SIZE;
  } catch {
    return 0;
  }
}

/** CPU % (of one core) and resident memory of a process tree, sampled from /proc. */
export class ProcessSampler {
  readonly samples: ProcessSample[] = [];
  private timer: NodeJS.Timeout | null = null;
  private last: { cpu: number; wall: number } | null = null;
  /** Milliseconds spent inside sampling ticks, for the sampler's own cost. */
  busyMs = 0;

  constructor(
    private readonly pid: number,
    private readonly clock: () => number,
    private readonly intervalMs = 250,
  ) {}

  static supported(): boolean {
    return fs.existsSync('/proc/self/stat');
  }

  private tick(): void {
    const started = performance.now();
    const tree = processTree(this.pid);
    const cpu = tree.reduce((sum, pid) => sum + readCpuSeconds(pid), 0);
    const wall = performance.now() / 1000;
    if (this.last && wall > this.last.wall) {
      this.samples.push({
        t: this.clock(),
        cpuPct: (Math.max(0, cpu - this.last.cpu) / (wall - this.last.wall)) * 100,
        rssBytes: tree.reduce((sum, pid) => sum + rssBytes(pid), 0),
      });
    }
    this.last = { cpu, wall };
    this.busyMs += performance.now() - started;
  }

  start(): void {
    if (this.timer || !ProcessSampler.supported()) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
