import type { StartupRecovery } from '../../shared/contract/server';

/** Says what opening the database cleaned up after processes that died. */
export function reportRecovered(recovered: StartupRecovery): void {
  for (const orphan of recovered.orphans.killed) {
    process.stderr.write(
      `inferlab: stopped an orphaned llama-server (pid ${orphan.pid}, port ${orphan.port}) left by a process that ended\n`,
    );
  }
  if (recovered.interruptedRuns > 0)
    process.stderr.write(`inferlab: marked ${recovered.interruptedRuns} unfinished run(s) as interrupted\n`);
}
