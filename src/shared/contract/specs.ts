/**
 * What callers send: the request shapes of the contract, declared once as JSON Schema (TypeBox).
 * Their TypeScript types are derived from these schemas, and the RPC boundary validates every
 * argument against them; ranges and combinations are checked by the services' own spec checks,
 * which the CLI runs too.
 */
import { Type, type Static } from '@sinclair/typebox';
import { LongText, Maybe, Name, Nullable, PathText, SloSpecSchema, Strict } from './schema-parts';
import { StartExperimentSpecSchema } from './experiment-kinds/registry';

export { LongText, Name, Names, Nullable, PathText, SloSpecSchema, type SloSpec } from './schema-parts';
export {
  QualityGateSchema,
  QuantConstraintsSchema,
  QuantObjectiveSchema,
  type QualityGate,
  type QuantConstraints,
  type QuantObjective,
} from './experiment-kinds/common';

export { FlashAttentionSchema, ServerProfileSchema, type FlashAttention, type ServerProfile } from './server-profile';

export const StartRunSpecSchema = Type.Object(
  {
    workload: PathText,
    model: Nullable(PathText),
    endpoint: Nullable(PathText),
    apiKeyEnv: Maybe(
      Name,
      "The variable holding the endpoint's API key; only the CLI may name one (RPC uses endpointKeys in config.json).",
    ),
    profileName: Name,
    settings: Type.Optional(Type.Array(LongText, { maxItems: 256, description: 'FIELD=VALUE settings over the profile, this run only.' })),
    force: Type.Optional(Type.Boolean({ description: 'Start beside another llama-server that claims the cores.' })),
    concurrency: Nullable(Type.Number({ description: 'Closed loop: requests in flight. Excludes rate.' })),
    rate: Nullable(Type.Number({ description: 'Open loop: requests per second.' })),
    burstiness: Maybe(Type.Number(), 'Open loop: 1 = Poisson arrivals, below 1 burstier (gamma), above 1 more regular.'),
    maxOutstanding: Maybe(Type.Number(), 'Open loop: requests outstanding before new arrivals wait.'),
    shards: Maybe(
      Type.Number(),
      'Open loop: worker threads that send the requests and read their streams, each on its own event loop (default 1: the run itself).',
    ),
    rampUpS: Maybe(Type.Number(), 'Seconds the load climbs to its level before the measured window; those requests are flagged warmup.'),
    rampShape: Maybe(
      Type.Union([Type.Literal('linear'), Type.Literal('exponential')]),
      'How the ramp climbs: linear from zero, or exponential from 1/16 of the load.',
    ),
    requests: Nullable(Type.Number()),
    durationS: Nullable(Type.Number()),
    warmup: Type.Number(),
    trace: Maybe(
      Type.Object(
        {
          speed: Nullable(Type.Number({ description: '2 replays twice as fast; null for 1.' })),
          startS: Nullable(Type.Number({ description: 'Replay from this many seconds into the trace.' })),
          endS: Nullable(Type.Number({ description: 'Replay up to this many seconds into the trace.' })),
          blockTokens: Nullable(Type.Number({ description: 'Prompt tokens per hash id; null for 512.' })),
        },
        Strict,
      ),
      'How a trace workload (a .jsonl file) is replayed.',
    ),
    slo: Maybe(SloSpecSchema),
    firstTokenTimeoutS: Maybe(Type.Number()),
    timeoutS: Maybe(Type.Number()),
    referenceRunId: Maybe(Name, "A stored run whose outputs this run's outputs are compared with."),
    metricsUrl: Maybe(PathText, 'Prometheus metrics to scrape for an endpoint run.'),
    gpuMetricsUrl: Maybe(
      PathText,
      "A GPU exporter's Prometheus page (dcgm-exporter, AMD device-metrics-exporter) for the serving machine's GPUs.",
    ),
    private: Type.Boolean(),
  },
  { ...Strict, description: 'Everything a run can be asked for, from the UI or the CLI; optional fields take their defaults.' },
);
export type StartRunSpec = Static<typeof StartRunSpecSchema>;

/** The bounds of a live race, shared by the schema, the service's check and the CLI's flags. */
export const LIVE_RACE_LIMITS = { lanes: { min: 2, max: 4 }, promptChars: 32_768, maxTokens: 4096 } as const;

export const LiveRaceRequestSchema = Type.Object(
  {
    lanes: Type.Array(
      Type.Object(
        {
          model: PathText,
          profileName: Maybe(Name, 'The saved profile the lane runs on; default when absent.'),
          settings: Type.Optional(Type.Array(LongText, { maxItems: 256, description: 'FIELD=VALUE settings over the profile.' })),
        },
        Strict,
      ),
      { minItems: LIVE_RACE_LIMITS.lanes.min, maxItems: LIVE_RACE_LIMITS.lanes.max },
    ),
    prompt: Type.Optional(
      Type.String({ minLength: 1, maxLength: LIVE_RACE_LIMITS.promptChars, description: 'The prompt every lane is given, typed.' }),
    ),
    item: Type.Optional(
      Type.Object(
        {
          workload: PathText,
          id: Type.String({ minLength: 1, maxLength: 128, description: "The item's id in that workload." }),
        },
        {
          ...Strict,
          description: 'An item of a workload every lane is given instead of a typed prompt (its messages, images and sampling).',
        },
      ),
    ),
    maxTokens: Type.Integer({ minimum: 1, maximum: LIVE_RACE_LIMITS.maxTokens }),
    together: Type.Boolean({
      description: 'Send every lane at one instant (they then compete for the machine); false runs them one after another.',
    }),
  },
  {
    ...Strict,
    description: 'A race measured now: two to four lanes, each a model on its own server, given one prompt (typed, or a workload item).',
  },
);
export type LiveRaceRequest = Static<typeof LiveRaceRequestSchema>;

/**
 * Everything an experiment can be asked for, from the UI or the CLI: the fields every kind shares,
 * then the kind's own (each declared beside its kind in experiment-kinds/, listed in its registry).
 */
export { StartExperimentSpecSchema };
export type StartExperimentSpec = Static<typeof StartExperimentSpecSchema>;
export type ExperimentKind = StartExperimentSpec['kind'];
/** The spec of one kind. */
export type ExperimentSpecOf<K extends ExperimentKind> = Extract<StartExperimentSpec, { kind: K }>;

export const SettingsChangesSchema = Type.Object(
  {
    decisionName: Type.Optional(Type.String({ maxLength: 80 })),
    defaultProfile: Type.Optional(Name),
    telemetryIntervalMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 10_000 })),
  },
  { ...Strict, description: 'What the Settings view may change; folders and engine paths change only in the config file.' },
);
export type SettingsChanges = Static<typeof SettingsChangesSchema>;

export const ScanOptionsSchema = Type.Object({ hash: Type.Optional(Type.Boolean()) }, Strict);

export const ModelPlanRequestSchema = Type.Object(
  {
    source: Type.String({ minLength: 1, maxLength: 4096, description: 'hf:OWNER/REPO[@REVISION], or a GGUF file or folder.' }),
    quants: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 })),
    contextPerSlot: Type.Optional(Type.Integer({ minimum: 256, maximum: 4_194_304, description: 'Tokens each slot may hold.' })),
    parallel: Type.Optional(Type.Integer({ minimum: 1, maximum: 256, description: 'Slots (--parallel).' })),
    kvType: Type.Optional(Type.Union([Type.Literal('f16'), Type.Literal('q8_0'), Type.Literal('q4_0')])),
    flashAttention: Type.Optional(Type.Boolean()),
    adapterFor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description: 'A base model (demo:q8_0 or a GGUF path) to check LoRA adapters against.',
      }),
    ),
  },
  Strict,
);

export const ModelPullRequestSchema = Type.Object(
  {
    source: Type.String({ minLength: 1, maxLength: 400, pattern: '^hf:', description: 'hf:OWNER/REPO[@REVISION].' }),
    quants: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: 64,
      description: "Quantization labels; ['all'] for every one; empty when the repository has only one.",
    }),
  },
  Strict,
);

export const EngineSetupOptionsSchema = Type.Object(
  {
    backend: Type.Optional(Type.Union([Type.Literal('cpu'), Type.Literal('cuda'), Type.Literal('vulkan'), Type.Literal('metal')])),
    force: Type.Optional(Type.Boolean({ description: 'Rebuild even when a build for the backend is cached.' })),
    fromSource: Type.Optional(
      Type.Boolean({ description: 'Build all of llama.cpp from source instead of compiling the tools on prebuilt libraries.' }),
    ),
  },
  Strict,
);
export type EngineSetupOptions = Static<typeof EngineSetupOptionsSchema>;

export const ServerStartOptionsSchema = Type.Object(
  {
    force: Type.Optional(Type.Boolean({ description: 'Start beside another llama-server that claims the cores.' })),
    engine: Type.Optional(Type.Union([Type.Literal('llama.cpp'), Type.Literal('vllm'), Type.Literal('sglang')])),
  },
  Strict,
);
export type ServerStartOptions = Static<typeof ServerStartOptionsSchema>;

export const FirstRequestSpecSchema = Type.Object(
  {
    model: PathText,
    profileName: Type.Optional(Name),
    settings: Type.Optional(Type.Array(LongText, { maxItems: 256 })),
    maxTokens: Maybe(Type.Number(), 'Tokens to generate (the end-of-sequence token is ignored so the length is known); 64 by default.'),
  },
  Strict,
);
export type FirstRequestSpec = Static<typeof FirstRequestSpecSchema>;
