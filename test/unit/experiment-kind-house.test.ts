import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import type { CheckedExperiment } from '../../src/main/services/experiment-spec';

/**
 * An experiment kind lives in its own files, and the rest of src/ reaches it through registry
 * lines alone: a kind named anywhere else is a place the next kind has to find and copy.
 * A file names a kind when it holds the kind's name as a string ('kvcache'), as an object key
 * (`kvcache:`), or imports one of the kind's own files.
 */
const root = projectRoot();
const KINDS = ['quant', 'warmcold', 'sweep', 'capacity', 'speculative', 'kvcache', 'adapter'] as const;
type Kind = (typeof KINDS)[number];

/** A kind's own files, per layer. */
const homeOf = (kind: Kind): RegExp =>
  new RegExp(
    `^src/(shared/contract/experiment-kinds/${kind}\\.ts|main/experiments/kinds/${kind}/[^/]+\\.ts|main/cli/kinds/${kind}(-text)?\\.ts|renderer/src/experiment-kinds/${kind}(-[a-z-]+)?\\.tsx?)$`,
  );
const HOMES = KINDS.map((kind) => [kind, homeOf(kind)] as const);

/**
 * The registries: each lists every kind, one line each. The target is three, one per layer
 * (docs/ARCHITECTURE.md): the shared contract's, main's and the renderer's.
 */
const REGISTRIES = [
  'src/shared/contract/experiment-kinds/registry.ts',
  'src/main/services/experiment-kinds.ts',
  'src/main/cli/kinds/registry.ts',
  'src/renderer/src/experiment-kinds/registry.ts',
];

/** The same word meaning something else: a table header, a run's speculative-decoding summary, a GPU sample's field. */
const NOT_THE_KIND: Record<string, Kind[]> = {
  'src/main/cli/commands/models.ts': ['quant'],
  'src/main/cli/pull-lines.ts': ['quant'],
  'src/main/metrics/run-summary.ts': ['speculative'],
  'src/renderer/src/views/SummaryTable.tsx': ['speculative'],
  'src/main/telemetry/gpu-exporter-parse.ts': ['sweep'],
  // A migration renames what older databases stored: the stored kind's name, not code of the kind.
  'src/main/store/migrations.ts': ['speculative'],
  // A GGUF file's general.type ("adapter": a LoRA file, no model) and an engine adapter's purpose.
  'src/main/models/lora-adapter.ts': ['adapter'],
  'src/main/models/model-library.ts': ['adapter'],
  'src/main/models/synthetic-adapter.ts': ['adapter'],
  'src/main/engines/llamacpp/serving-purpose.ts': ['adapter'],
  // A model plan's candidate that is a LoRA adapter file, not a model.
  'src/shared/contract/models.ts': ['adapter'],
  'src/main/models/plan/plan-models.ts': ['adapter'],
  'src/main/cli/plan-table.ts': ['quant', 'adapter'],
};

/**
 * Where a kind is still named outside its files and the registries: each is work left of
 * docs/ARCHITECTURE.md, and the list only shrinks. A new entry here is a leak to move into the kind.
 */
const STILL_TO_MOVE: Record<string, Kind[]> = {
  // The demo runs one experiment of each of these kinds.
  'src/main/cli/commands/demo.ts': ['warmcold', 'capacity'],
  // The demo's quantization comparison, run by the CLI demo and the UI's demo button alike.
  'src/shared/experiment-defaults.ts': ['quant'],
  // The views open the quantization form by default and from a model.
  'src/renderer/src/views/ExperimentForm.tsx': ['quant'],
  'src/renderer/src/views/ExperimentsView.tsx': ['quant'],
  'src/renderer/src/views/ModelsView.tsx': ['quant'],
  'src/renderer/src/views/ModelPull.tsx': ['quant'],
  // The result every kind shares carries kinds' own fields (capacity's search, greedy equivalence, ConditionResult's per-kind figures).
  'src/shared/contract/experiments.ts': ['capacity'],
};

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : /\.tsx?$/.test(entry.name) ? [path.join(dir, entry.name)] : [],
    );
}

/** The kinds a file names, by its text and what it imports. */
function kindsNamedIn(file: string): Kind[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const imported = [...text.matchAll(/from\s+'(\.[^']*)'/g)].map((match) =>
    path
      .relative(root, path.resolve(path.dirname(path.join(root, file)), match[1]!))
      .split(path.sep)
      .join('/'),
  );
  return KINDS.filter(
    (kind) =>
      new RegExp(`['"]${kind}['"]|^\\s*${kind}:`, 'm').test(text) ||
      imported.some((target) => [`${target}.ts`, `${target}.tsx`].some((candidate) => homeOf(kind).test(candidate))),
  );
}

const FILES = sourceFiles(path.join(root, 'src')).map((file) => path.relative(root, file).split(path.sep).join('/'));

describe('an experiment kind lives in its own files', () => {
  it('names no kind outside its own files and the registries, but what is listed as left to move', () => {
    const found: Record<string, Kind[]> = {};
    for (const file of FILES) {
      if (REGISTRIES.includes(file)) continue;
      const home = HOMES.find(([, pattern]) => pattern.test(file))?.[0];
      const named = kindsNamedIn(file).filter((kind) => kind !== home && !NOT_THE_KIND[file]?.includes(kind));
      if (named.length > 0) found[file] = named;
    }
    expect(found, 'reach the kind through its registry entry; see docs/ARCHITECTURE.md, "Add an experiment kind"').toEqual(STILL_TO_MOVE);
  });

  it('has each registry list every kind, and no other file list them all', () => {
    const listing = FILES.filter((file) => kindsNamedIn(file).length === KINDS.length);
    expect(listing.sort()).toEqual([...REGISTRIES].sort());
  });

  it('keeps kind-specific data out of the checked experiment every kind shares', () => {
    // A kind's own checked data (files, quantizations, a draft model, an evaluation text) is its entry's `own`.
    expectTypeOf<keyof CheckedExperiment>().toEqualTypeOf<
      'workload' | 'repeats' | 'requestsPerWindow' | 'concurrency' | 'model' | 'constraints' | 'own'
    >();
    const shared = fs.readFileSync(path.join(root, 'src/main/experiments/recommend.ts'), 'utf8');
    // The KV cache memory the kvcache kind compares is its own gate (experiments/kinds/kvcache/kv-cache-memory.ts).
    expect(shared).not.toMatch(/kv_cache_mib/);
  });
});
