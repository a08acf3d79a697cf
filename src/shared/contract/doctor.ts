import type { EngineInfo } from './engine';

export type CheckStatus = 'ok' | 'missing' | 'warning';

export interface DoctorCheck {
  id: 'engine' | 'gpu-engine' | 'build-tools' | 'demo-models' | 'gpu' | 'database' | 'orphans' | 'electron' | 'chromium';
  label: string;
  status: CheckStatus;
  detail: string;
  /** What to run or change, when the status is not ok. */
  fix: string | null;
}

export interface GpuSummary {
  vendor: string;
  model: string;
  vramMib: number | null;
  driver: string | null;
}

export interface DoctorReport {
  checks: DoctorCheck[];
  engine: EngineInfo | null;
  gpus: GpuSummary[];
  databasePath: string;
  demoModels: { ref: string; path: string; status: 'ok' | 'missing' | 'corrupt'; reason?: string }[];
}
