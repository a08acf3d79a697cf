import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inferlab } from './cli';

/** What the product itself says this machine has: tests branch on this, never on a guess about the machine. */
export interface MachineReport {
  gpus: string[];
  engineBackend: string | null;
}

const reports = new Map<string, Promise<MachineReport>>();
let doctorDir: string | null = null;

/** One scratch database for every doctor call of this test process, removed when it exits. */
function doctorDatabase(): string {
  if (!doctorDir) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-doctor-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    doctorDir = dir;
  }
  return path.join(doctorDir, 'doctor.db');
}

/** `inferlab doctor --json` under `env` (a PATH of the test's own, say), asked once per environment. */
export function machineReport(env: NodeJS.ProcessEnv = {}): Promise<MachineReport> {
  const key = JSON.stringify(env);
  let report = reports.get(key);
  if (!report) {
    report = inferlab(['doctor', '--json', '--db', doctorDatabase()], env).then((result) => {
      const parsed = JSON.parse(result.stdout) as { gpus: { model: string }[]; engine: { backend?: string | null } | null };
      return { gpus: parsed.gpus.map((gpu) => gpu.model), engineBackend: parsed.engine?.backend ?? null };
    });
    reports.set(key, report);
  }
  return report;
}
