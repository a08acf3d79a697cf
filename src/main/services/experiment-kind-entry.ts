import type { StartExperimentSpec } from '../../shared/contract';
import type { ExperimentResult, QuantConstraints } from '../../shared/contract/experiments';
import type { ServerProfile } from '../../shared/contract/server';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import type { ExperimentStore } from '../store/experiment-store';
import type { WindowCooldown } from '../experiments/window-cooldown';
import type { WorkloadDef } from '../workload/workload-types';
import type { ServiceAccess } from './access';
import type { KindReport } from '../experiments/kinds/kind-report';

/**
 * The shape of a kind's entry, apart from the registry that lists the entries (experiment-kinds.ts)
 * and the shared check (experiment-spec.ts), so that neither they nor an entry import each other
 * for a type.
 */

/** What every kind's protocol is handed by the experiments service. */
export interface ExperimentCommon {
  cooldown: WindowCooldown | null;
  runs: RunStore;
  experiments: ExperimentStore;
  servers: ServerManager;
  engine: () => Promise<EngineInfo>;
  workload: { def: WorkloadDef; file: string };
  profile: ServerProfile;
  repeats: number;
  requestsPerWindow: number;
  concurrency: number;
  signal: AbortSignal;
  onStatus: (line: string) => void;
}

/**
 * An experiment spec checked against the face's rights, with files read and models resolved: the
 * fields every kind shares, and in `own` what the kind's entry read for itself (typed by the entry).
 */
export interface CheckedExperiment<Own = unknown> {
  workload: { def: WorkloadDef; file: string };
  repeats: number;
  requestsPerWindow: number;
  concurrency: number;
  /** The served or base model; null where the kind compares files it names instead. */
  model: { ref: string; path: string } | null;
  constraints: QuantConstraints;
  own: Own;
}

/** One experiment kind as the services see it: how its protocol is started from a checked spec of that kind. */
export interface ExperimentKindEntry<S extends StartExperimentSpec = StartExperimentSpec, Own = unknown> {
  /** The built-in workload it runs when the spec names none. */
  defaultWorkload: string;
  /** What it adds to the HTML report every experiment shares. */
  report: () => Promise<KindReport>;
  /** Checks of the spec only this kind makes, before anything is read or started (throws InvalidInput). */
  checkShape?: (spec: S) => void;
  /** The spec names files to compare instead of one model: no model is required or resolved. */
  namesFiles?: (spec: S) => boolean;
  /** The workload it runs when the spec names none, where that depends on the spec. */
  defaultWorkloadFor?: (spec: S) => string;
  /** The kind also compares embeddings workloads, on latency per request and inputs/s, where the others compare generated answers only. */
  measuresEmbeddings?: boolean;
  /** What the kind needs of the workload it was given. */
  checkWorkload?: (spec: S, workload: WorkloadDef) => void;
  /** What else the kind reads (files to compare, a draft model, an evaluation text), each held to the face's roots. */
  resolve?: (spec: S, access: ServiceAccess, model: CheckedExperiment['model']) => Promise<Own>;
  /** Profile settings the kind will apply on top of the experiment's profile, each checked before the job opens. */
  settingsToCheck?: (spec: S) => { label: string; settings: string[] }[];
  run: (common: ExperimentCommon, spec: S, checked: CheckedExperiment<Own>) => Promise<ExperimentResult>;
}
