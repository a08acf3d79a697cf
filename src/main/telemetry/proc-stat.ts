import fs from 'node:fs';
import path from 'node:path';

/**
 * Reading /proc for CPU accounting. The root is a parameter so tests can point it at a
 * fake tree; everything here tolerates processes ending between listing and reading.
 */

/** Linux's USER_HZ: /proc reports CPU time in these ticks on every mainstream kernel. */
export const TICKS_PER_SECOND = 100;

export interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  state: string;
  /** utime + stime, in ticks. */
  cpuTicks: number;
  /** Start time after boot, in ticks (orders processes by age). */
  startTicks: number;
}

/** Parses /proc/<pid>/stat; the command name may itself hold spaces and parentheses. */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state); utime/stime are fields 14/15, starttime field 22.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const ppid = Number(fields[1]);
  const startTicks = Number(fields[19]);
  if (!Number.isFinite(pid) || !Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return {
    pid,
    ppid: Number.isFinite(ppid) ? ppid : 0,
    comm: text.slice(open + 1, close),
    state: fields[0] ?? '?',
    cpuTicks: utime + stime,
    startTicks: Number.isFinite(startTicks) ? startTicks : 0,
  };
}

export function readProcStat(pid: number, root = '/proc'): ProcStat | null {
  try {
    return parseProcStat(fs.readFileSync(path.join(root, String(pid), 'stat'), 'utf8'));
  } catch {
    return null;
  }
}

/** Every process visible under the root. */
export function listProcesses(root = '/proc'): ProcStat[] {
  let entries: string[];
  try {
    entries = fs.readdirSync(root);
  } catch {
    return [];
  }
  const result: ProcStat[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry), root);
    if (stat) result.push(stat);
  }
  return result;
}

/** argv of a process ([] when it ended or hides it). */
export function readCmdline(pid: number, root = '/proc'): string[] {
  try {
    return fs
      .readFileSync(path.join(root, String(pid), 'cmdline'), 'utf8')
      .split('\0')
      .filter((part) => part !== '');
  } catch {
    return [];
  }
}

export interface CpuTotals {
  /** Ticks spent doing anything but idling, over all CPUs. */
  busyTicks: number;
  cpus: number;
}

/**
 * The aggregate `cpu` line of /proc/stat. Busy = user + nice + system + irq + softirq +
 * steal; guest time is already inside user, and iowait is idle time.
 */
export function readCpuTotals(root = '/proc'): CpuTotals | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(root, 'stat'), 'utf8');
  } catch {
    return null;
  }
  const lines = text.split('\n');
  const aggregate = lines.find((line) => /^cpu\s/.test(line));
  if (!aggregate) return null;
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = aggregate.trim().split(/\s+/).slice(1).map(Number);
  const cpus = lines.filter((line) => /^cpu\d+\s/.test(line)).length;
  return { busyTicks: user + nice + system + irq + softirq + steal, cpus: Math.max(1, cpus) };
}

/** A process and all its descendants, from the parent links of one listing. */
export function descendants(processes: readonly ProcStat[], rootPid: number): Set<number> {
  const children = new Map<number, number[]>();
  for (const process of processes) {
    const list = children.get(process.ppid);
    if (list) list.push(process.pid);
    else children.set(process.ppid, [process.pid]);
  }
  const found = new Set<number>([rootPid]);
  const queue = [rootPid];
  while (queue.length > 0) {
    for (const child of children.get(queue.pop()!) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** llama-server by its kernel name or the program in its argv. */
export function isLlamaServer(process: ProcStat, argv: readonly string[]): boolean {
  return process.comm === 'llama-server' || path.basename(argv[0] ?? '') === 'llama-server';
}

/**
 * What a process is, without what it was given: the program's file name, and for a Python
 * program run as a module, the module (`python3 -m vllm.entrypoints.openai.api_server`).
 * Other people's argv hold their secrets (`--api-key sk-…`, `--hf-token hf_…`, `-pPASSWORD`),
 * and what is recorded of their processes ends up in runs and exports users share.
 */
export function executableName(argv: readonly string[], comm: string): string {
  const program = path.basename(argv[0] ?? '');
  if (!program) return `[${comm}]`;
  const moduleName = /^python[\d.]*$/.test(program) && argv[1] === '-m' ? argv[2] : undefined;
  return moduleName && /^[\w.]+$/.test(moduleName) ? `${program} -m ${moduleName}` : program;
}

/** `-t N` / `--threads N` / `--threads=N` from a llama-server argv; null when not given. */
export function threadsFromArgv(argv: readonly string[]): number | null {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    let raw: string | undefined;
    if (arg === '-t' || arg === '--threads') raw = argv[i + 1];
    else if (arg.startsWith('--threads=')) raw = arg.slice('--threads='.length);
    if (raw === undefined) continue;
    const value = Number(raw);
    if (Number.isInteger(value) && value > 0) return value;
  }
  return null;
}

export interface RunningLlamaServer {
  pid: number;
  command: string;
  /** Its parent's argv, to tell another Infer Lab's server from one started by hand. */
  parentCommand: string;
  /** Its -t, or the machine's cores when it was left to llama.cpp's own default. */
  threads: number;
  threadsGiven: boolean;
  startTicks: number;
}

/** Every live llama-server under the root, except the pids given. */
export function findLlamaServers(options: { root?: string; cores: number; exclude?: ReadonlySet<number> }): RunningLlamaServer[] {
  const root = options.root ?? '/proc';
  const found: RunningLlamaServer[] = [];
  for (const process of listProcesses(root)) {
    if (options.exclude?.has(process.pid) || process.state === 'Z' || process.state === 'X') continue;
    const argv = readCmdline(process.pid, root);
    if (!isLlamaServer(process, argv)) continue;
    const threads = threadsFromArgv(argv);
    found.push({
      pid: process.pid,
      command: executableName(argv, process.comm),
      parentCommand: readCmdline(process.ppid, root).join(' '),
      threads: threads ?? options.cores,
      threadsGiven: threads !== null,
      startTicks: process.startTicks,
    });
  }
  return found.sort((a, b) => a.startTicks - b.startTicks || a.pid - b.pid);
}

/**
 * The llama-server on this machine that listens on a port (its `--port`, or llama.cpp's
 * default 8080 when it names none), for runs against a local endpoint: that server is the
 * run's own work, not competition.
 */
export function llamaServerOnPort(port: number, root = '/proc'): number | null {
  for (const process of listProcesses(root)) {
    const argv = readCmdline(process.pid, root);
    if (!isLlamaServer(process, argv)) continue;
    const at = argv.indexOf('--port');
    const inline = argv.find((arg) => arg.startsWith('--port='));
    const listening = at >= 0 ? Number(argv[at + 1]) : inline ? Number(inline.slice('--port='.length)) : 8080;
    if (listening === port) return process.pid;
  }
  return null;
}

/** The port of an http(s) URL on this machine; null for other hosts. */
export function localPort(url: string): number | null {
  try {
    const parsed = new URL(url);
    if (!['localhost', '127.0.0.1', '[::1]', '0.0.0.0'].includes(parsed.hostname)) return null;
    return Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
  } catch {
    return null;
  }
}

/** A process's CPU time so far (user + system), in seconds; 0 once it is gone. */
export function readCpuSeconds(pid: number): number {
  try {
    // Fields 14 and 15 (utime, stime), in clock ticks.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}
