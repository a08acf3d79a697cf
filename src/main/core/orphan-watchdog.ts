import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Servers run in process groups of their own (so stopping one stops what it started), which
 * also means nothing kills them when this process dies. The watchdog is a tiny helper process
 * holding the other end of a pipe: this process tells it which groups are alive, and when the
 * pipe closes — a normal exit, a crash, SIGKILL, a closed terminal — it terminates the groups
 * still listed. No polling, and it works wherever Node runs.
 */
const WATCHDOG_SOURCE = `
const groups = new Set();
let pending = '';
for (const name of ['SIGINT', 'SIGHUP', 'SIGTERM']) process.on(name, () => {});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  for (let at = pending.indexOf('\\n'); at >= 0; at = pending.indexOf('\\n')) {
    const [op, id] = pending.slice(0, at).split(' ');
    pending = pending.slice(at + 1);
    const pid = Number(id);
    if (!Number.isInteger(pid) || pid <= 1) continue;
    if (op === '+') groups.add(pid); else groups.delete(pid);
  }
});
const signal = (name) => { for (const pid of groups) { try { process.kill(-pid, name); } catch {} } };
process.stdin.on('end', () => {
  if (groups.size === 0) process.exit(0);
  signal('SIGCONT');
  signal('SIGTERM');
  setTimeout(() => { signal('SIGKILL'); process.exit(0); }, 3000);
});
`;

class OrphanWatchdog {
  private helper: ChildProcess | null = null;
  private unavailable = process.platform === 'win32';
  private readonly live = new Set<number>();

  /** From now on, the group led by `pid` dies with this process. */
  guard(pid: number): void {
    this.live.add(pid);
    this.send(`+ ${pid}`);
  }

  release(pid: number): void {
    this.live.delete(pid);
    this.send(`- ${pid}`);
  }

  /** For a second Ctrl-C: kill every guarded group at once, before this process exits. */
  killAllNow(): void {
    for (const pid of this.live) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    this.live.clear();
  }

  /** The helper's pid, for tests. */
  get helperPid(): number | null {
    return this.helper?.pid ?? null;
  }

  private send(line: string): void {
    if (this.unavailable) return;
    if (!this.helper) {
      try {
        // Its own group, so the terminal's Ctrl-C or hang-up reaches this process, not the helper.
        this.helper = spawn(process.execPath, ['-e', WATCHDOG_SOURCE], {
          stdio: ['pipe', 'ignore', 'ignore'],
          detached: process.platform !== 'win32',
          env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
        });
      } catch {
        this.unavailable = true;
        return;
      }
      this.helper.on('error', () => (this.unavailable = true));
      this.helper.stdin!.on('error', () => (this.unavailable = true));
      // Neither the helper nor its pipe may keep this process alive.
      this.helper.unref();
      (this.helper.stdin as unknown as { unref?: () => void }).unref?.();
    }
    this.helper.stdin!.write(`${line}\n`);
  }
}

/** One per process, because it is tied to this process's lifetime. */
export const orphanWatchdog = new OrphanWatchdog();
