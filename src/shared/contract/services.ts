/**
 * The service contract, declared once: every callable method with its named arguments (JSON
 * Schema, validated at the RPC boundary) and its result type. The service interfaces, the
 * allow-list of callable methods and the boundary's validators are all derived from this table,
 * so a method cannot exist in one and not the others.
 *
 * Results are produced by the main process itself; they are declared as types (`returns<T>()`)
 * and not validated on the way out.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { Comparison } from './compare';
import type { Race } from '../race';
import type { DoctorReport } from './doctor';
import type { MetricHistory } from './history';
import type { ExperimentResult } from './experiments';
import type { HubModelMatch, ModelPlan, ModelScan, PulledModel, QuantTypeInfo } from './models';
import type {
  DecisionRecord,
  ExperimentListItem,
  FirstRequestResult,
  RunDetail,
  SettingsInfo,
  ImportedRun,
  ParquetExport,
  RunExport,
  RunListItem,
  SkippedRun,
  WorkloadInfo,
  WorkloadValidation,
} from './results';
import type { LogExplanation, ProfileProblem, ServerSnapshot } from './server';
import type { TaskListItem } from './tasks';
import {
  EngineSetupOptionsSchema,
  FirstRequestSpecSchema,
  LongText,
  Name,
  Names,
  Nullable,
  PathText,
  ScanOptionsSchema,
  ModelPlanRequestSchema,
  ModelPullRequestSchema,
  ServerStartOptionsSchema,
  ServerProfileSchema,
  SettingsChangesSchema,
  StartExperimentSpecSchema,
  StartRunSpecSchema,
  LiveRaceRequestSchema,
} from './specs';

export interface ArgumentDefinition<S extends TSchema = TSchema, O extends boolean = boolean> {
  name: string;
  schema: S;
  optional: O;
}

export interface MethodDefinition<A extends readonly ArgumentDefinition[] = readonly ArgumentDefinition[], R extends TSchema = TSchema> {
  args: A;
  result: R;
  summary: string;
}

const arg = <S extends TSchema>(name: string, schema: S): ArgumentDefinition<S, false> => ({ name, schema, optional: false });
const optional = <S extends TSchema>(name: string, schema: S) => ({ name, schema: Nullable(schema), optional: true as const });
/** A result type: declared for the compiler, produced by main, not validated. */
const returns = <T>() => Type.Unsafe<T>({});
const method = <const A extends readonly ArgumentDefinition[], R extends TSchema>(
  summary: string,
  args: A,
  result: R,
): MethodDefinition<A, R> => ({
  summary,
  args,
  result,
});

const JobStarted = Type.Object({ jobId: Type.String() });

export const SERVICE_CONTRACT = {
  tasks: {
    list: method(
      'The running tasks (runs, experiments, quantizations, pulls, engine setups) and the last ones that ended, oldest first, each with its kind, phase, line and counters; their progress arrives as task.progress events.',
      [],
      returns<TaskListItem[]>(),
    ),
    cancel: method(
      'Stops a task: a run after its requests in flight (finished requests kept), an experiment after its current request (stored as interrupted, its finished windows kept), a quantization (llama-quantize killed, its partial file removed), a pull (the file being downloaded deleted), an engine setup (the build killed, nothing installed). An id no task has is ignored.',
      [arg('jobId', Name)],
      Type.Void(),
    ),
  },
  doctor: {
    report: method('What this machine has: engine, GPUs, database, folders.', [], returns<DoctorReport>()),
  },
  settings: {
    get: method(
      'Where the data, config, database, model folders and engine are, and the settings the UI can change.',
      [],
      returns<SettingsInfo>(),
    ),
    update: method(
      'Saves the name decisions are recorded under, the default profile and the telemetry interval to the config file.',
      [arg('changes', SettingsChangesSchema)],
      returns<SettingsInfo>(),
    ),
  },
  demo: {
    firstRequest: method(
      'The smallest real measurement: starts a server on the model, streams one completion, stores it as a run, stops the server.',
      [arg('spec', FirstRequestSpecSchema)],
      returns<FirstRequestResult>(),
    ),
  },
  engine: {
    setup: method(
      'Locates llama.cpp or builds it for a backend (cached by commit and backend), then makes the demo models; progress arrives as task.progress events (kind setup).',
      [optional('options', EngineSetupOptionsSchema)],
      JobStarted,
    ),
  },
  models: {
    scan: method(
      "The GGUF files in the folders (the usual model folders by default); hash adds each file's SHA-256, cached by path, size and time.",
      [optional('folders', Type.Array(PathText, { maxItems: 1024 })), optional('options', ScanOptionsSchema)],
      returns<ModelScan>(),
    ),
    quantize: method(
      'Starts llama-quantize; progress arrives as task.progress events (kind quantize, tensors). New files go beside the source unless outDir names a folder.',
      [arg('source', PathText), arg('types', Names), optional('outDir', PathText)],
      JobStarted,
    ),
    plan: method(
      "For each GGUF of a hub repository (read by HTTP range, not downloaded) or a local folder: the memory a server needs at the settings, whether it fits this machine's GPUs, and the decode-speed ceiling.",
      [arg('request', ModelPlanRequestSchema)],
      returns<ModelPlan>(),
    ),
    search: method(
      'Hub repositories with GGUF files whose name holds the words, most downloaded first (at most 30); each an hf: name to plan or pull.',
      [arg('query', Type.String({ minLength: 2, maxLength: 200 }))],
      returns<HubModelMatch[]>(),
    ),
    pull: method(
      "Downloads the named quantizations of a hub repository into the Hugging Face cache, each file checked against the hub's SHA-256; progress arrives as task.progress events (kind pull, bytes).",
      [arg('request', ModelPullRequestSchema)],
      JobStarted,
    ),
    cached: method(
      'The quantizations of a hub repository already in the Hugging Face cache at its revision, with their files (no network).',
      [arg('source', Type.String({ minLength: 1, maxLength: 400, pattern: '^hf:' })), arg('quants', Names)],
      returns<PulledModel[]>(),
    ),
    quantTypes: method(
      "The types the engine's llama-quantize can make, in its order, with its own notes; those needing an importance matrix are marked.",
      [],
      returns<QuantTypeInfo[]>(),
    ),
  },
  servers: {
    list: method('Every server this app started, as snapshots.', [], returns<ServerSnapshot[]>()),
    profiles: method('The saved server profiles and the built-in default.', [], returns<Static<typeof ServerProfileSchema>[]>()),
    defaultProfile: method('The built-in default profile.', [], ServerProfileSchema),
    validateProfile: method(
      "A profile's problems, each naming its field; checked against the model's header when modelRef is given.",
      [arg('profile', ServerProfileSchema), arg('modelRef', Nullable(PathText))],
      returns<ProfileProblem[]>(),
    ),
    saveProfile: method('Saves a profile under its name, after validating it.', [arg('profile', ServerProfileSchema)], Type.Void()),
    deleteProfile: method(
      'False when no saved profile has the name; the built-in default cannot be deleted.',
      [arg('name', Name)],
      Type.Boolean(),
    ),
    start: method(
      'Starts a managed server (llama-server unless options.engine says otherwise); refused when its threads would oversubscribe the cores beside another llama-server, unless options.force. Readiness arrives as server.state events.',
      [arg('modelRef', PathText), arg('profile', ServerProfileSchema), optional('options', ServerStartOptionsSchema)],
      returns<ServerSnapshot>(),
    ),
    stop: method('Stops a server: SIGTERM, a grace period, then SIGKILL.', [arg('serverId', Name)], returns<ServerSnapshot>()),
    logs: method("The tail of a server's log.", [arg('serverId', Name)], Type.Array(Type.String())),
    explainLog: method(
      'Reads a pasted llama-server or llama.cpp log from any build: the build, devices, where the weights went, KV cache, context, flash attention, slots, and the warnings that cost performance.',
      [arg('text', Type.String({ maxLength: 4 * 2 ** 20 }))],
      returns<LogExplanation>(),
    ),
  },
  workloads: {
    list: method('The built-in and saved workloads.', [], returns<WorkloadInfo[]>()),
    read: method(
      "A workload's YAML text, by name or by path within the workload roots.",
      [arg('name', PathText)],
      Type.Object({ name: Type.String(), file: Type.String(), text: Type.String() }),
    ),
    validate: method(
      'Problems of a workload text, each with line and field, and its items with their input lengths.',
      [arg('text', LongText)],
      returns<WorkloadValidation>(),
    ),
  },
  runs: {
    start: method('Starts a run; progress arrives as task.progress events (kind run).', [arg('spec', StartRunSpecSchema)], JobStarted),
    validate: method(
      'The first problem start would refuse the spec for (a field, a range, a path outside the roots), or null; nothing is started.',
      [arg('spec', StartRunSpecSchema)],
      Type.Object({ problem: Nullable(Type.String()) }),
    ),
    list: method(
      'Stored runs, newest first; 500 unless limit says otherwise.',
      [optional('limit', Type.Integer({ minimum: 1, maximum: 100_000 }))],
      returns<RunListItem[]>(),
    ),
    page: method(
      'One page of stored runs, newest first, with how many match: every word of search must appear in the model, quantization, engine, workload, status, kind or start time. A run whose record cannot be read is left out and named in skipped.',
      [
        arg(
          'query',
          Type.Object(
            {
              offset: Type.Integer({ minimum: 0, maximum: 10_000_000 }),
              limit: Type.Integer({ minimum: 1, maximum: 1000 }),
              search: Type.Optional(Type.String({ maxLength: 500 })),
            },
            { additionalProperties: false },
          ),
        ),
      ],
      returns<{ items: RunListItem[]; total: number; skipped: SkippedRun[] }>(),
    ),
    get: method('One stored run: summary, manifest, telemetry and request marks.', [arg('runId', Name)], returns<RunDetail>()),
    remove: method('Deletes a stored run; false when there is none.', [arg('runId', Name)], Type.Boolean()),
    exportRun: method(
      "A run's files: manifest, summary, requests (JSONL and CSV) and telemetry.",
      [arg('runId', Name)],
      returns<RunExport>(),
    ),
    exportParquet: method(
      'Writes the store (or one run, or one experiment with its runs and decisions) as Parquet tables: runs, requests, chunks, telemetry, experiments, conditions, verdicts, decisions, and a manifest.json. The folder must be inside the results roots; without one, a new folder under the first root.',
      [
        arg(
          'request',
          Type.Object(
            { runId: Type.Optional(Name), experimentId: Type.Optional(Name), folder: Type.Optional(Nullable(PathText)) },
            { additionalProperties: false },
          ),
        ),
      ],
      returns<ParquetExport>(),
    ),
    importRun: method(
      'Brings an exported run folder (manifest.json, summary.json, requests.jsonl, telemetry.json) back as a run under its own id, all or nothing; the folder must be inside the results roots.',
      [arg('folder', PathText)],
      returns<ImportedRun>(),
    ),
    compare: method(
      'Runs side by side, with a verdict per metric where the evidence supports one.',
      [arg('runIds', Type.Array(Name, { maxItems: 64 }))],
      returns<Comparison>(),
    ),
    race: method(
      'Two to four stored requests (RUN or RUN:SEQ; a run alone gives its first measured success) as lanes of a race, each with its chunk times and the answer text each chunk added, to replay at the pace it was measured.',
      [arg('requests', Type.Array(Type.String({ maxLength: 160, pattern: '^[^:]+(:\\d+)?$' }), { minItems: 2, maxItems: 4 }))],
      returns<Race>(),
    ),
    startRace: method(
      "Measures a race now: each lane's model on its own server, warmed by one request, then given the prompt; one after another by default, or all at one instant with together. Lanes are stored as runs; the race arrives on task.progress (kind race) when the last lane ends.",
      [arg('request', LiveRaceRequestSchema)],
      JobStarted,
    ),
    history: method(
      'A metric (tpot_ms:p50, ttft_ms:p95, output_tokens_per_s, ...) across engine builds: completed runs of each comparable configuration (model file, workload revision, server profile, load) apart, one mean with its 95 % interval per build.',
      [
        arg(
          'query',
          Type.Object(
            {
              metric: Type.String({ maxLength: 64 }),
              model: Type.Optional(Nullable(PathText)),
              workload: Type.Optional(Nullable(Name)),
              key: Type.Optional(Nullable(Type.String({ maxLength: 64, pattern: '^[0-9a-f]+$' }))),
            },
            { additionalProperties: false },
          ),
        ),
      ],
      returns<MetricHistory>(),
    ),
  },
  experiments: {
    start: method(
      'Starts an experiment; progress arrives as task.progress events (kind experiment).',
      [arg('spec', StartExperimentSpecSchema)],
      JobStarted,
    ),
    validate: method(
      'The first problem start would refuse the spec for (a field, a combination, a setting, a path outside the roots), or null; nothing is started.',
      [arg('spec', StartExperimentSpecSchema)],
      Type.Object({ problem: Nullable(Type.String()) }),
    ),
    list: method('Stored experiments, newest first.', [], returns<ExperimentListItem[]>()),
    get: method(
      'One experiment with its conditions, verdicts and recommendation.',
      [arg('experimentId', Name)],
      returns<ExperimentResult | null>(),
    ),
    report: method(
      'A finished experiment as one self-contained HTML file (tables, evidence, verdicts, recommendation), with a file name for it.',
      [arg('experimentId', Name)],
      Type.Object({ fileName: Type.String(), html: Type.String() }),
    ),
    decide: method(
      "Records the user's choice for an experiment, with the reason and who decided.",
      [arg('experimentId', Name), arg('chosen', Name), arg('reason', LongText), arg('decidedBy', Name)],
      returns<DecisionRecord>(),
    ),
    decisions: method('Every recorded decision.', [], returns<DecisionRecord[]>()),
  },
} as const;

type Contract = typeof SERVICE_CONTRACT;
export type ServiceName = keyof Contract;

/** The positional parameters of a method; optional arguments come last. */
type ArgumentValues<A extends readonly ArgumentDefinition[]> = A extends readonly [
  infer Head extends ArgumentDefinition,
  ...infer Rest extends readonly ArgumentDefinition[],
]
  ? Head['optional'] extends true
    ? [value?: Static<Head['schema']>, ...ArgumentValues<Rest>]
    : [value: Static<Head['schema']>, ...ArgumentValues<Rest>]
  : [];

type ServiceOf<D> = {
  [M in keyof D]: D[M] extends MethodDefinition<infer A, infer R> ? (...args: ArgumentValues<A>) => Promise<Static<R>> : never;
};

/** Every service the UI and the CLI call, typed from the contract. */
export type AppServices = { [S in ServiceName]: ServiceOf<Contract[S]> };
export type DoctorService = AppServices['doctor'];
export type SettingsService = AppServices['settings'];
export type EngineService = AppServices['engine'];
export type DemoService = AppServices['demo'];
export type ModelsService = AppServices['models'];
export type ServersService = AppServices['servers'];
export type WorkloadsService = AppServices['workloads'];
export type RunsService = AppServices['runs'];
export type ExperimentsService = AppServices['experiments'];
export type TasksService = AppServices['tasks'];

/** `service.method` for every callable method. */
export type MethodName = { [S in ServiceName]: `${S}.${keyof Contract[S] & string}` }[ServiceName];

export function isServiceName(name: string): name is ServiceName {
  return Object.hasOwn(SERVICE_CONTRACT, name);
}

export function contractMethod(service: string, name: string): MethodDefinition | null {
  if (!isServiceName(service)) return null;
  const methods = SERVICE_CONTRACT[service as ServiceName] as Record<string, MethodDefinition>;
  return Object.hasOwn(methods, name) ? methods[name]! : null;
}
