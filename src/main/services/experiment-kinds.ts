import type { StartExperimentSpec } from '../../shared/contract';
import type { ExperimentKind, ExperimentResult } from '../../shared/contract/experiments';
import type { ServerProfile } from '../../shared/contract/server';
import type { EngineInfo } from '../../shared/contract/engine';
import { DEFAULT_EXPERIMENT_WORKLOAD } from '../../shared/experiment-defaults';
import { isDemoRef } from '../models/demo-models';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import type { ExperimentStore } from '../store/experiment-store';
import type { WindowCooldown } from '../experiments/window-cooldown';
import type { WorkloadDef } from '../workload/workload-types';
import { cacheSettings, needsFlashAttention } from '../experiments/kinds/kvcache/cache-conditions';
import { checkKvCacheShape, kvCacheConditionsOf } from '../experiments/kinds/kvcache/spec';
import type { CheckedExperiment } from './experiment-spec';

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

/** One experiment kind as the services see it: how its protocol is started from a checked spec. */
export interface ExperimentKindEntry {
  /** The built-in workload it runs when the spec names none. */
  defaultWorkload: string;
  /** Checks of the spec only this kind makes, before anything is read or started (throws InvalidInput). */
  checkShape?: (spec: StartExperimentSpec) => void;
  /** Profile settings the kind will apply on top of the experiment's profile, each checked before the job opens. */
  settingsToCheck?: (spec: StartExperimentSpec) => { label: string; settings: string[] }[];
  run: (common: ExperimentCommon, spec: StartExperimentSpec, checked: CheckedExperiment) => Promise<ExperimentResult>;
}

/**
 * The registry: one entry per kind. The protocols load with the first experiment of their kind,
 * so listing and deciding load none of them. docs/ARCHITECTURE.md has the recipe for a new kind.
 */
export const EXPERIMENT_KINDS: Record<ExperimentKind, ExperimentKindEntry> = {
  quant: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.quant,
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/quant/protocol')).runQuantExperiment({
        ...common,
        baseRef: checked.files ? checked.files[0]!.file : isDemoRef(spec.model) ? spec.model : checked.model!.path,
        quants: checked.quants,
        files: checked.files,
        constraints: checked.constraints,
        kldText: checked.kldText?.text ?? null,
        kldTextSource: checked.kldText?.source ?? null,
      }),
  },
  warmcold: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.warmcold,
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/warmcold/protocol')).runWarmCold({
        ...common,
        model: checked.model!,
        coldStarts: spec.coldStarts ?? undefined,
        skipCacheReset: spec.skipCacheReset,
      }),
  },
  sweep: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.sweep,
    settingsToCheck: (spec) => spec.vary!.values.map((value) => ({ label: "the sweep's", settings: [`${spec.vary!.field}=${value}`] })),
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/sweep/protocol')).runSweep({
        ...common,
        model: checked.model!,
        vary: spec.vary!,
        concurrencies: spec.loadConcurrencies?.length ? spec.loadConcurrencies : [checked.concurrency],
        requestsPerCondition: checked.requestsPerWindow,
        slo: checked.constraints.slo,
      }),
  },
  capacity: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.capacity,
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/capacity/protocol')).runCapacity({
        ...common,
        model: checked.model!,
        slo: checked.constraints.slo!,
        by: spec.capacity!.by,
        percentile: spec.capacity!.percentile,
        start: spec.capacity!.start ?? undefined,
        maxLoad: spec.capacity!.maxLoad ?? undefined,
        keepCache: spec.capacity!.keepCache,
        requestsPerLook: spec.requestsPerWindow,
      }),
  },
  spec: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.spec,
    run: async (common, _spec, checked) =>
      (await import('../experiments/kinds/spec/protocol')).runSpecExperiment({
        ...common,
        model: checked.model!,
        draftModel: checked.draft!.model,
        draftMax: checked.draft!.max,
        requestsPerCondition: checked.requestsPerWindow,
      }),
  },
  kvcache: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.kvcache,
    checkShape: checkKvCacheShape,
    settingsToCheck: (spec) => {
      const conditions = kvCacheConditionsOf(spec);
      return conditions.map((condition) => ({
        label: `cache type ${condition.name}:`,
        settings: cacheSettings(condition, needsFlashAttention(conditions), spec.kvCache?.contextSize ?? null),
      }));
    },
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/kvcache/protocol')).runKvCacheExperiment({
        ...common,
        model: checked.model!,
        conditions: kvCacheConditionsOf(spec),
        contextSize: spec.kvCache?.contextSize ?? null,
        constraints: checked.constraints,
        kldText: checked.kldText,
      }),
  },
};
