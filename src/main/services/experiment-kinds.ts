import type { ExperimentKind, ExperimentSpecOf, StartExperimentSpec } from '../../shared/contract';
import { DEFAULT_EXPERIMENT_WORKLOAD } from '../../shared/contract/experiment-kinds/registry';
import { cacheSettings, needsFlashAttention } from '../experiments/kinds/kvcache/cache-conditions';
import { checkKvCacheShape, kvCacheConditionsOf } from '../experiments/kinds/kvcache/spec';
import { checkQuantShape, quantNames } from '../experiments/kinds/quant/spec';
import { quantFilesOf } from '../experiments/kinds/quant/quant-files-of';
import { checkSweepShape, checkSweepWorkload, sweepDefaultWorkload, sweepSettings } from '../experiments/kinds/sweep/spec';
import { checkWarmColdShape } from '../experiments/kinds/warmcold/spec';
import { capacityDefaultWorkload, checkCapacityShape, checkCapacityWorkload } from '../experiments/kinds/capacity/spec';
import { checkDraftShape, DEFAULT_DRAFT_MAX } from '../experiments/kinds/speculative/spec';
import { adapterConditionsOf, checkAdapterShape } from '../experiments/kinds/adapter/spec';
import { adapterSettings, swappedFiles } from '../experiments/kinds/adapter/conditions';
import { assertLoraAdapterFits } from '../models/lora-adapter';
import { isDemoRef, resolveModelRef } from '../models/demo-models';
import { checkQuantFiles, type QuantFile } from '../models/quant-files';
import { resolveModelWithin, type ServiceAccess } from './access';
import type { ExperimentKindEntry } from './experiment-kind-entry';
import type { KindReport } from '../experiments/kinds/kind-report';
import { readKldText } from './kld-text';

/** The entry of kind K, taking K's spec, with its own checked data (`own`) typed by what its `resolve` returns. */
const kind =
  <K extends ExperimentKind>() =>
  <Own = undefined>(entry: ExperimentKindEntry<ExperimentSpecOf<K>, Own>) =>
    entry;

/** The files a quantization spec names to compare, each held to the face's roots and checked; null when it names none. */
async function quantFilesWithin(spec: ExperimentSpecOf<'quant'>, access: ServiceAccess): Promise<QuantFile[] | null> {
  if (!Array.isArray(spec.files) || spec.files.length === 0) return null;
  const files = await Promise.all(
    spec.files.map(async (entry) => ({
      name: String(entry?.name ?? ''),
      file: await access.paths.check(String(entry?.path ?? ''), 'model'),
    })),
  );
  // The CLI's flag by its own name.
  return checkQuantFiles(files, access.face === 'shell' ? '--files' : 'files');
}

/**
 * The registry: one entry per kind. The protocols load with the first experiment of their kind,
 * so listing and deciding load none of them. docs/ARCHITECTURE.md has the recipe for a new kind.
 */
const EXPERIMENT_KINDS = {
  quant: kind<'quant'>()({
    report: async () => (await import('../experiments/kinds/quant/report-section')).QUANT_REPORT,
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.quant,
    checkShape: checkQuantShape,
    namesFiles: (spec) => Array.isArray(spec.files) && spec.files.length > 0,
    // The files it compares, or the quantizations it reads or makes beside its model, held to the face's roots.
    resolve: async (spec, access, model) => {
      const files = await quantFilesWithin(spec, access);
      if (model && !isDemoRef(model.ref))
        for (const { file: sibling } of await quantFilesOf(model.path, quantNames(spec))) await access.paths.check(sibling, 'model');
      return { files, quants: quantNames(spec), kldText: await readKldText(spec.kldTextFile, access) };
    },
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/quant/protocol')).runQuantExperiment({
        ...common,
        baseRef: checked.own.files ? checked.own.files[0]!.file : isDemoRef(spec.model) ? spec.model : checked.model!.path,
        quants: checked.own.quants,
        files: checked.own.files,
        constraints: checked.constraints,
        kldText: checked.own.kldText?.text ?? null,
        kldTextSource: checked.own.kldText?.source ?? null,
        fixed: spec.fixed === true,
      }),
  }),
  warmcold: kind<'warmcold'>()({
    report: async () => (await import('../experiments/kinds/warmcold/report-section')).WARMCOLD_REPORT,
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.warmcold,
    checkShape: checkWarmColdShape,
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/warmcold/protocol')).runWarmCold({
        ...common,
        model: checked.model!,
        coldStarts: spec.coldStarts ?? undefined,
        skipCacheReset: spec.skipCacheReset,
        fixed: spec.fixed === true,
      }),
  }),
  sweep: kind<'sweep'>()({
    report: async () => (await import('../experiments/kinds/sweep/report-section')).SWEEP_REPORT,
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.sweep,
    checkShape: checkSweepShape,
    defaultWorkloadFor: (spec) => sweepDefaultWorkload(spec, DEFAULT_EXPERIMENT_WORKLOAD.sweep),
    measuresEmbeddings: true,
    checkWorkload: checkSweepWorkload,
    settingsToCheck: sweepSettings,
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/sweep/protocol')).runSweep({
        ...common,
        model: checked.model!,
        vary: spec.vary!,
        concurrencies: spec.loadConcurrencies?.length ? spec.loadConcurrencies : [checked.concurrency],
        requestsPerCondition: checked.requestsPerWindow,
        fixed: spec.fixed === true,
        slo: checked.constraints.slo,
      }),
  }),
  capacity: kind<'capacity'>()({
    report: async () => (await import('../experiments/kinds/capacity/report-section')).CAPACITY_REPORT,
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
  }),
  speculative: kind<'speculative'>()({
    report: async () => (await import('../experiments/kinds/speculative/report-section')).SPECULATIVE_REPORT,
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.speculative,
    checkShape: checkDraftShape,
    resolve: async (spec, access) => ({
      draft: {
        model: isDemoRef(spec.draftModel!) ? spec.draftModel! : await resolveModelWithin(access, spec.draftModel!),
        max: spec.draftMax ?? DEFAULT_DRAFT_MAX,
      },
    }),
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/speculative/protocol')).runSpeculativeExperiment({
        ...common,
        model: checked.model!,
        draftModel: checked.own.draft.model,
        draftMax: checked.own.draft.max,
        requestsPerCondition: checked.requestsPerWindow,
        fixed: spec.fixed === true,
      }),
  }),
  kvcache: kind<'kvcache'>()({
    report: async () => (await import('../experiments/kinds/kvcache/report-section')).KVCACHE_REPORT,
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.kvcache,
    checkShape: checkKvCacheShape,
    resolve: async (spec, access) => ({ kldText: await readKldText(spec.kldTextFile, access) }),
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
        kldText: checked.own.kldText,
        fixed: spec.fixed === true,
      }),
  }),
  adapter: kind<'adapter'>()({
    report: async () => (await import('../experiments/kinds/adapter/report-section')).ADAPTER_REPORT,
    defaultWorkload: DEFAULT_EXPERIMENT_WORKLOAD.adapter,
    checkShape: checkAdapterShape,
    // Each adapter held to the face's roots and checked against the model before the job opens; the
    // servers are then given the file that was checked.
    resolve: async (spec, access, model) => {
      const conditions = await Promise.all(
        adapterConditionsOf(spec).map(async (condition) => {
          if (condition.file === null) return condition;
          const file = isDemoRef(condition.file) ? condition.file : await access.paths.check(condition.file, 'model');
          if (model) await assertLoraAdapterFits(await resolveModelRef(file), model.path);
          return { ...condition, file };
        }),
      );
      return { conditions, kldText: await readKldText(spec.kldTextFile, access) };
    },
    settingsToCheck: (spec) => {
      const conditions = adapterConditionsOf(spec);
      return conditions.map((condition) => ({
        label: `adapter ${condition.name}:`,
        settings: adapterSettings(condition, swappedFiles(conditions)),
      }));
    },
    run: async (common, spec, checked) =>
      (await import('../experiments/kinds/adapter/protocol')).runAdapterExperiment({
        ...common,
        model: checked.model!,
        conditions: checked.own.conditions,
        serving: spec.serving ?? 'own',
        constraints: checked.constraints,
        kldText: checked.own.kldText,
        fixed: spec.fixed === true,
      }),
  }),
} satisfies Record<ExperimentKind, unknown>;

/** Whether a name is a kind in the registry (a name such as `constructor` is not looked up on a prototype). */
export const isExperimentKind = (name: unknown): name is ExperimentKind =>
  typeof name === 'string' && Object.hasOwn(EXPERIMENT_KINDS, name);

export const EXPERIMENT_KIND_NAMES = Object.keys(EXPERIMENT_KINDS) as ExperimentKind[];

/**
 * The entry of the spec's kind, taking that spec: the registry is keyed by the same literal the
 * spec carries, which TypeScript cannot follow through an index, hence the one widening here.
 */
export function kindEntryOf(spec: Pick<StartExperimentSpec, 'kind'>): ExperimentKindEntry {
  return EXPERIMENT_KINDS[spec.kind] as unknown as ExperimentKindEntry;
}

/** What a kind adds to the HTML report every experiment shares, loaded with the first report of its kind. */
export const kindReportOf = (kind: ExperimentKind): Promise<KindReport> => EXPERIMENT_KINDS[kind].report();
