import type { ExperimentKind, ExperimentSpecOf, StartExperimentSpec } from '../../shared/contract';
import { DEFAULT_EXPERIMENT_WORKLOAD } from '../../shared/experiment-defaults';
import type { ExperimentResult } from '../../shared/contract/experiments';
import type { ServerProfile } from '../../shared/contract/server';
import type { EngineInfo } from '../../shared/contract/engine';
import { isDemoRef } from '../models/demo-models';
import type { ServerManager } from '../server/server-manager';
import type { RunStore } from '../store/run-store';
import type { ExperimentStore } from '../store/experiment-store';
import type { WindowCooldown } from '../experiments/window-cooldown';
import type { WorkloadDef } from '../workload/workload-types';
import { cacheSettings, needsFlashAttention } from '../experiments/kinds/kvcache/cache-conditions';
import { checkKvCacheShape, kvCacheConditionsOf } from '../experiments/kinds/kvcache/spec';
import { checkQuantShape, quantNames } from '../experiments/kinds/quant/spec';
import { quantFilesOf } from '../experiments/kinds/quant/quant-files-of';
import { checkSweepShape } from '../experiments/kinds/sweep/spec';
import { checkWarmColdShape } from '../experiments/kinds/warmcold/spec';
import { capacityDefaultWorkload, checkCapacityShape, checkCapacityWorkload } from '../experiments/kinds/capacity/spec';
import { checkDraftShape, DEFAULT_DRAFT_MAX } from '../experiments/kinds/speculative/spec';
import { checkQuantFiles, type QuantFile } from '../models/quant-files';
import { resolveModelWithin, type ServiceAccess } from './access';
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

/** One experiment kind as the services see it: how its protocol is started from a checked spec of that kind. */
export interface ExperimentKindEntry<S extends StartExperimentSpec = StartExperimentSpec> {
  /** The built-in workload it runs when the spec names none. */
  defaultWorkload: string;
  /** Checks of the spec only this kind makes, before anything is read or started (throws InvalidInput). */
  checkShape?: (spec: S) => void;
  /** The workload it runs when the spec names none, where that depends on the spec. */
  defaultWorkloadFor?: (spec: S) => string;
  /** What the kind needs of the workload it was given. */
  checkWorkload?: (spec: S, workload: WorkloadDef) => void;
  /** The kind compares files it names instead of one model (quant): each held to the face's roots and checked. */
  files?: (spec: S, access: ServiceAccess) => Promise<QuantFile[] | null>;
  /** What else the kind reads (a draft model, the files it will make beside the model), held to the face's roots. */
  resolve?: (spec: S, access: ServiceAccess, model: CheckedExperiment['model']) => Promise<Partial<Pick<CheckedExperiment, 'draft'>>>;
  /** Profile settings the kind will apply on top of the experiment's profile, each checked before the job opens. */
  settingsToCheck?: (spec: S) => { label: string; settings: string[] }[];
  run: (common: ExperimentCommon, spec: S, checked: CheckedExperiment) => Promise<ExperimentResult>;
}

type ExperimentKindEntries = { [K in ExperimentKind]: ExperimentKindEntry<ExperimentSpecOf<K>> };

/**
 * The registry: one entry per kind. The protocols load with the first experiment of their kind,
 * so listing and deciding load none of them. docs/ARCHITECTURE.md has the recipe for a new kind.
 */
const EXPERIMENT_KINDS: ExperimentKindEntries = {
  quant: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.quant,
    checkShape: checkQuantShape,
    files: async (spec, access) =>
      Array.isArray(spec.files) && spec.files.length > 0
        ? checkQuantFiles(
            await Promise.all(
              spec.files.map(async (entry) => ({
                name: String(entry?.name ?? ''),
                file: await access.paths.check(String(entry?.path ?? ''), 'model'),
              })),
            ),
            // The CLI's flag by its own name.
            access.face === 'shell' ? '--files' : 'files',
          )
        : null,
    // The quantizations it reads or makes beside its model are held to the same roots.
    resolve: async (spec, access, model) => {
      if (model && !isDemoRef(model.ref))
        for (const { file: sibling } of await quantFilesOf(model.path, quantNames(spec))) await access.paths.check(sibling, 'model');
      return {};
    },
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
    checkShape: checkWarmColdShape,
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
    checkShape: checkSweepShape,
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
    checkShape: checkCapacityShape,
    defaultWorkloadFor: (spec) => capacityDefaultWorkload(spec, DEFAULT_EXPERIMENT_WORKLOAD.capacity),
    checkWorkload: checkCapacityWorkload,
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
  speculative: {
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.speculative,
    checkShape: checkDraftShape,
    resolve: async (spec, access) => ({
      draft: {
        model: isDemoRef(spec.draftModel!) ? spec.draftModel! : await resolveModelWithin(access, spec.draftModel!),
        max: spec.draftMax ?? DEFAULT_DRAFT_MAX,
      },
    }),
    run: async (common, _spec, checked) =>
      (await import('../experiments/kinds/speculative/protocol')).runSpeculativeExperiment({
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

/** Whether a name is a kind in the registry (a name such as `constructor` is not looked up on a prototype). */
export const isExperimentKind = (name: unknown): name is ExperimentKind =>
  typeof name === 'string' && Object.hasOwn(EXPERIMENT_KINDS, name);

export const EXPERIMENT_KIND_NAMES = Object.keys(EXPERIMENT_KINDS) as ExperimentKind[];

/**
 * The entry of the spec's kind, taking that spec: the registry is keyed by the same literal the
 * spec carries, which TypeScript cannot follow through an index, hence the one widening here.
 */
export function kindEntryOf(spec: StartExperimentSpec): ExperimentKindEntry {
  return EXPERIMENT_KINDS[spec.kind] as unknown as ExperimentKindEntry;
}
