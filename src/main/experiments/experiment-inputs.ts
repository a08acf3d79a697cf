import type { EngineInfo } from '../../shared/contract/engine';
import type { ServerProfile } from '../../shared/contract/server';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import type { WorkloadDef } from '../workload/workload-types';
import type { ExperimentStore } from '../store/experiment-store';

/** What every experiment on one model needs: where runs go, how servers start, what runs. */
export interface SingleModelExperimentInputs {
  runs: RunStore;
  experiments: ExperimentStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  model: { ref: string; path: string };
  workload: { def: WorkloadDef; file: string };
  profile: ServerProfile;
}

/** How every experiment window's run is made: generous timeouts, stored text, no reference, a short idle baseline. */
export const WINDOW_RUN_DEFAULTS = {
  timeouts: { firstTokenMs: 120_000, totalMs: 600_000 },
  private: false,
  referenceRunId: null,
  baselineMs: 300,
} as const;
