import os from 'node:os';
import path from 'node:path';
import { inferlab } from './cli';

/** What the product itself says this machine has: tests branch on this, never on a guess about the machine. */
export interface MachineReport {
  gpus: string[];
  engineBackend: string | null;
}

const reports = new Map<string, Promise<MachineReport>>();

/** `inferlab doctor --json` under `env` (a PATH of the test's own, say), asked once per environment. */
export function machineReport(env: NodeJS.ProcessEnv = {}): Promise<MachineReport> {
  const key = JSON.stringify(env);
  let report = reports.get(key);
  if (!report) {
    report = inferlab(['doctor', '--json', '--db', path.join(os.tmpdir(), `inferlab-doctor-${process.pid}.db`)], env).then((result) => {
      const parsed = JSON.parse(result.stdout) as { gpus: { model: string }[]; engine: { backend?: string | null } | null };
      return { gpus: parsed.gpus.map((gpu) => gpu.model), engineBackend: parsed.engine?.backend ?? null };
    });
    reports.set(key, report);
  }
  return report;
}
