import type { ContentionSample, ContentionSummary } from '../../shared/contract/telemetry';
import { PERCENTILE_MIN_N } from '../../shared/experiment-defaults';
import path from 'node:path';
import {
  descendants,
  executableName,
  isLlamaServer,
  listProcesses,
  readCmdline,
  readCpuTotals,
  TICKS_PER_SECOND,
  type ProcStat,
} from './proc-stat';

/** Another llama-server averaging more than this many cores over the window was serving someone else. */
export const LLAMA_SERVER_BUSY_CORES = 0.1;
/** Processes below this share of a core are not worth naming. */
const NAMED_PROCESS_MIN_CORES = 0.05;
const NAMED_PROCESSES = 10;

export interface ContentionSamplerOptions {
  clock: () => number;
  /** The run's server; its whole process tree is the run's own work, not competition. */
  serverPid: number | null;
  /** This process and the sampler's own helpers (nvidia-smi loops): the measurement itself. */
  selfPids: () => readonly number[];
  /** Per-process GPU memory seen by the GPU sampler, newest last; empty without a GPU. */
  gpuProcesses?: () => readonly { pid: number; usedMib: number | null; name?: string | null }[];
  procRoot?: string;
  intervalMs?: number;
}

/**
 * What competed with a run for the machine, on the run's clock: every tick the CPU time
 * the whole machine spent busy, minus the server's process tree and this process, is
 * the competition; each other process's own share is kept so the competition has names.
 */
export class ContentionSampler {
  readonly samples: ContentionSample[] = [];
  /** Milliseconds spent inside sampling ticks, for the sampler's own cost. */
  busyMs = 0;
  private timer: NodeJS.Timeout | null = null;
  private last: { t: number; busyTicks: number; perPid: Map<number, ProcStat> } | null = null;
  private readonly commands = new Map<string, string>();
  private cpus = 1;
  private unavailable: string | null = null;

  constructor(private readonly options: ContentionSamplerOptions) {}

  get root(): string {
    return this.options.procRoot ?? '/proc';
  }

  get intervalMs(): number {
    return this.options.intervalMs ?? 250;
  }

  get unavailableReason(): string | null {
    return this.unavailable;
  }

  get cpuCount(): number {
    return this.cpus;
  }

  /** What a pid runs (its executable's name, never its arguments), read once per process lifetime (pid + start time). */
  command(process: ProcStat): string {
    const key = `${process.pid}:${process.startTicks}`;
    let command = this.commands.get(key);
    if (command === undefined) {
      command = executableName(readCmdline(process.pid, this.root), process.comm);
      this.commands.set(key, command);
    }
    return command;
  }

  sample(): ContentionSample | null {
    const started = performance.now();
    try {
      const totals = readCpuTotals(this.root);
      if (!totals) {
        this.unavailable = `${this.root}/stat is not readable: competing CPU use is not measured on this system`;
        return null;
      }
      this.cpus = totals.cpus;
      const t = this.options.clock();
      const processes = listProcesses(this.root);
      const perPid = new Map(processes.map((process) => [process.pid, process]));
      // An all-day idle sampler sees many short-lived processes: forget the ended ones.
      if (this.commands.size > 4 * processes.length + 64) {
        const live = new Set(processes.map((process) => `${process.pid}:${process.startTicks}`));
        for (const key of this.commands.keys()) if (!live.has(key)) this.commands.delete(key);
      }
      const previous = this.last;
      this.last = { t, busyTicks: totals.busyTicks, perPid };
      if (!previous || t <= previous.t) return null;

      const server = this.options.serverPid ? descendants(processes, this.options.serverPid) : new Set<number>();
      const self = new Set(this.options.selfPids());
      const seconds = (t - previous.t) / 1000;
      const delta = (process: ProcStat) => {
        const before = previous.perPid.get(process.pid);
        // A pid seen for the first time (or reused) started within this interval.
        const base = before && before.startTicks === process.startTicks ? before.cpuTicks : 0;
        return Math.max(0, process.cpuTicks - base);
      };
      let ownTicks = 0;
      const others: ContentionSample['processes'] = [];
      const llamaServers: ContentionSample['llama_servers'] = [];
      for (const process of processes) {
        const ticks = delta(process);
        if (server.has(process.pid) || self.has(process.pid)) {
          ownTicks += ticks;
          continue;
        }
        const command = process.comm === 'llama-server' || ticks > 0 ? this.command(process) : '';
        if (isLlamaServer(process, [command])) llamaServers.push({ pid: process.pid, command, cores: ticks / TICKS_PER_SECOND / seconds });
        if (ticks > 0) others.push({ pid: process.pid, command, cores: ticks / TICKS_PER_SECOND / seconds });
      }
      // The machine-wide total also holds processes that came and went between two ticks.
      const otherTicks = Math.max(0, totals.busyTicks - previous.busyTicks - ownTicks);
      const gpu = (this.options.gpuProcesses?.() ?? []).filter((entry) => !server.has(entry.pid) && !self.has(entry.pid));
      const sample: ContentionSample = {
        t,
        interval_ms: t - previous.t,
        other_cpu_cores: Math.min(totals.cpus, otherTicks / TICKS_PER_SECOND / seconds),
        processes: others,
        llama_servers: llamaServers,
        gpu_processes: gpu.map((entry) => ({
          pid: entry.pid,
          command: entry.name ? path.basename(entry.name) : this.commandOf(entry.pid, perPid),
          used_mib: entry.usedMib,
        })),
      };
      this.samples.push(sample);
      return sample;
    } finally {
      this.busyMs += performance.now() - started;
    }
  }

  private commandOf(pid: number, perPid: Map<number, ProcStat>): string {
    const process = perPid.get(pid);
    return process ? this.command(process) : `pid ${pid}`;
  }

  start(): void {
    if (this.timer) return;
    this.sample();
    if (this.unavailable) return;
    this.timer = setInterval(() => this.sample(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    // The last partial interval belongs to the run too.
    this.sample();
  }
}

/** Nearest-rank percentile of an already sorted list. */
function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

const round = (value: number) => Math.round(value * 1000) / 1000;

type NamedProcess = ContentionSummary['top_processes'][number];
type OtherServer = ContentionSummary['other_llama_servers'][number];

/** Who else ran over the window: the busiest processes by mean cores, other llama-servers, and processes holding GPU memory. */
function otherProcesses(inWindow: readonly ContentionSample[], seconds: number) {
  const perProcess = new Map<number, { command: string; coreSeconds: number }>();
  const servers = new Map<number, { command: string; coreSeconds: number }>();
  const gpu = new Map<number, { command: string; used: number[] }>();
  for (const sample of inWindow) {
    const weight = sample.interval_ms / 1000;
    for (const entry of sample.processes) {
      const known = perProcess.get(entry.pid) ?? { command: entry.command, coreSeconds: 0 };
      known.coreSeconds += entry.cores * weight;
      perProcess.set(entry.pid, known);
    }
    for (const entry of sample.llama_servers) {
      const known = servers.get(entry.pid) ?? { command: entry.command, coreSeconds: 0 };
      known.coreSeconds += entry.cores * weight;
      servers.set(entry.pid, known);
    }
    for (const entry of sample.gpu_processes) {
      const known = gpu.get(entry.pid) ?? { command: entry.command, used: [] };
      if (entry.used_mib !== null) known.used.push(entry.used_mib);
      gpu.set(entry.pid, known);
    }
  }
  const top: NamedProcess[] = [...perProcess.entries()]
    .map(([pid, entry]) => ({ pid, command: entry.command, cpu_cores_mean: round(entry.coreSeconds / seconds) }))
    .filter((entry) => entry.cpu_cores_mean >= NAMED_PROCESS_MIN_CORES)
    .sort((a, b) => b.cpu_cores_mean - a.cpu_cores_mean)
    .slice(0, NAMED_PROCESSES);
  const llamaServers: OtherServer[] = [...servers.entries()].map(([pid, entry]) => {
    const cores = entry.coreSeconds / seconds;
    return { pid, command: entry.command, cpu_cores_mean: round(cores), busy: cores > LLAMA_SERVER_BUSY_CORES };
  });
  const gpuProcesses = [...gpu.entries()].map(([pid, entry]) => ({
    pid,
    command: entry.command,
    used_mib_max: entry.used.length ? Math.max(...entry.used) : null,
  }));
  return { top, llamaServers, gpuProcesses };
}

/** Why the window counts as contaminated, one reason per cause; empty when it does not. */
function contentionReasons(
  otherMean: number,
  top: readonly NamedProcess[],
  llamaServers: readonly OtherServer[],
  options: { thresholdCores: number; cpus: number },
): string[] {
  const reasons: string[] = [];
  if (otherMean > options.thresholdCores) {
    const named = top
      .slice(0, 3)
      .map((entry) => `pid ${entry.pid} ${shortCommand(entry.command)} ${entry.cpu_cores_mean.toFixed(2)}`)
      .join(', ');
    reasons.push(
      `other processes used ${otherMean.toFixed(2)} CPU cores on average (threshold ${options.thresholdCores}; ${options.cpus} cores in all)${named ? `: ${named}` : ''}`,
    );
  }
  for (const entry of llamaServers.filter((server) => server.busy)) {
    reasons.push(`another llama-server (pid ${entry.pid}) was busy, ${entry.cpu_cores_mean.toFixed(2)} cores on average`);
  }
  return reasons;
}

/**
 * The run's competition over its measured window (a sample covers the interval that ends
 * at its t; it counts when that interval's middle lies inside the window). Contaminated
 * when others used more than `thresholdCores` on average, or another llama-server was
 * busy: either one distorts latency far beyond run-to-run noise on a small machine.
 */
export function summarizeContention(
  samples: readonly ContentionSample[],
  options: {
    windowStart: number | null;
    windowEnd: number | null;
    thresholdCores: number;
    intervalMs: number;
    cpus: number;
    unavailableReason?: string | null;
  },
): ContentionSummary {
  const inWindow = samples.filter((sample) => {
    const middle = sample.t - sample.interval_ms / 2;
    return options.windowStart !== null && middle >= options.windowStart && (options.windowEnd === null || middle <= options.windowEnd);
  });
  const base = {
    interval_ms: options.intervalMs,
    samples: inWindow.length,
    cpus: options.cpus,
    threshold_cpu_cores: options.thresholdCores,
    llama_server_busy_cores: LLAMA_SERVER_BUSY_CORES,
  };
  if (inWindow.length === 0) {
    return {
      ...base,
      other_cpu_cores_mean: null,
      other_cpu_cores_p95: null,
      other_cpu_cores_max: null,
      top_processes: [],
      other_llama_servers: [],
      other_gpu_processes: [],
      contaminated: false,
      reason: null,
      unavailable_reason: options.unavailableReason ?? 'no contention samples in the measured window',
    };
  }
  const seconds = inWindow.reduce((sum, sample) => sum + sample.interval_ms, 0) / 1000;
  // Time-weighted: intervals stretch when the machine is too busy to run the timer on time.
  const otherMean = inWindow.reduce((sum, sample) => sum + sample.other_cpu_cores * sample.interval_ms, 0) / 1000 / seconds;
  const sorted = inWindow.map((sample) => sample.other_cpu_cores).sort((a, b) => a - b);

  const { top, llamaServers, gpuProcesses } = otherProcesses(inWindow, seconds);

  const reasons = contentionReasons(otherMean, top, llamaServers, options);
  return {
    ...base,
    other_cpu_cores_mean: round(otherMean),
    other_cpu_cores_p95: inWindow.length >= PERCENTILE_MIN_N.p95 ? round(percentile(sorted, 0.95)) : null,
    other_cpu_cores_max: round(sorted[sorted.length - 1]!),
    top_processes: top,
    other_llama_servers: llamaServers,
    other_gpu_processes: gpuProcesses,
    contaminated: reasons.length > 0,
    reason: reasons.length > 0 ? reasons.join('; ') : null,
    unavailable_reason: null,
  };
}

/** Program name and first few arguments: enough to recognise a process in one line. */
export function shortCommand(command: string): string {
  const parts = command.split(' ');
  const program = parts[0]?.split('/').pop() ?? '';
  const rest = parts.slice(1).join(' ');
  const line = rest ? `${program} ${rest}` : program;
  return line.length > 60 ? `${line.slice(0, 57)}...` : line;
}
