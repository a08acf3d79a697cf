/**
 * What callers send: the request shapes of the contract, declared once as JSON Schema (TypeBox).
 * Their TypeScript types are derived from these schemas, and the RPC boundary validates every
 * argument against them; ranges and combinations are checked by the services' own spec checks,
 * which the CLI runs too.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';

/** JSON carries an absent optional value as null, so optional fields accept both. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
const Maybe = <T extends TSchema>(schema: T, description?: string) =>
  Type.Optional(Nullable(description ? { ...schema, description } : schema));
const Strict = { additionalProperties: false } as const;

/** Bounds that keep a hostile caller from handing the services unbounded input. */
export const Name = Type.String({ maxLength: 512 });
export const PathText = Type.String({ maxLength: 4096 });
export const LongText = Type.String({ maxLength: 8 * 1024 * 1024 });
export const Names = Type.Array(Name, { maxItems: 10_000 });

export const SloSpecSchema = Type.Object(
  {
    ttft_ms: Type.Optional(Type.Number()),
    tpot_ms: Type.Optional(Type.Number()),
    e2e_ms: Type.Optional(Type.Number()),
  },
  { ...Strict, description: 'Latency limits a request must meet to count toward goodput, in milliseconds.' },
);
export type SloSpec = Static<typeof SloSpecSchema>;

export const FlashAttentionSchema = Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Literal('auto')]);
export type FlashAttention = Static<typeof FlashAttentionSchema>;

export const ServerProfileSchema = Type.Object(
  {
    name: Name,
    contextSize: Type.Integer(),
    parallelSlots: Type.Integer(),
    batchSize: Type.Integer(),
    ubatchSize: Type.Integer(),
    gpuLayers: Type.Integer(),
    flashAttention: FlashAttentionSchema,
    cacheTypeK: Name,
    cacheTypeV: Name,
    threads: Type.Integer(),
    cacheRamMib: Type.Integer(),
    cacheReuse: Type.Integer(),
    allowContextOverTrained: Type.Boolean({ description: 'Allow a context larger than the model was trained for.' }),
    draftModel: Nullable(
      Type.String({
        maxLength: 4096,
        description:
          'Speculative decoding: a smaller model with the same vocabulary that drafts tokens (a demo ref or GGUF path); null for none.',
      }),
    ),
    draftMax: Type.Integer({ description: 'Most tokens drafted per step.' }),
    draftMin: Type.Integer({ description: 'Fewest tokens drafted per step.' }),
    draftPMin: Type.Number({ description: 'A draft stops at a token the draft model gives less than this probability.' }),
    draftGpuLayers: Type.Integer({ description: 'Layers of the draft model placed on the GPU.' }),
    gpuDevices: Type.Optional(
      Type.String({
        maxLength: 256,
        description: 'The GPUs the server may use: "all", or indexes as nvidia-smi numbers them, e.g. "0,1". Telemetry counts only these.',
      }),
    ),
    extraFlags: Type.Array(Name, { maxItems: 256, description: 'Further flags, as argv items, e.g. ["--mlock"].' }),
  },
  { ...Strict, description: 'A named set of llama-server options. Every field is passed explicitly at launch.' },
);
export type ServerProfile = Static<typeof ServerProfileSchema>;

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

export const QuantObjectiveSchema = Type.Union([Type.Literal('memory'), Type.Literal('tpot'), Type.Literal('ttft')]);
export type QuantObjective = Static<typeof QuantObjectiveSchema>;
export const QualityGateSchema = Type.Union([Type.Literal('acceptance'), Type.Literal('token agreement'), Type.Literal('kld')]);
export type QualityGate = Static<typeof QualityGateSchema>;

export const QuantConstraintsSchema = Type.Object(
  {
    vramBudgetMib: Nullable(Type.Number()),
    minAgreement: Nullable(Type.Number()),
    minAcceptance: Nullable(Type.Number({ description: 'An absolute acceptance floor, on top of the comparison with the baseline.' })),
    slo: Nullable(SloSpecSchema),
    maxKld: Maybe(Type.Number()),
    acceptanceAlpha: Maybe(Type.Number()),
    objective: Type.Optional(QuantObjectiveSchema),
    disabledGates: Type.Optional(Type.Array(QualityGateSchema, { maxItems: 3 })),
  },
  {
    ...Strict,
    description:
      'What the user asked of the recommendation. A null threshold means the default from EXPERIMENT_DEFAULTS.gates; a disabled gate is printed as "not applicable".',
  },
);
export type QuantConstraints = Static<typeof QuantConstraintsSchema>;

export const StartExperimentSpecSchema = Type.Object(
  {
    kind: Type.Union([
      Type.Literal('quant'),
      Type.Literal('warmcold'),
      Type.Literal('sweep'),
      Type.Literal('capacity'),
      Type.Literal('speculative'),
      Type.Literal('kvcache'),
    ]),
    model: PathText,
    quants: Type.Array(Name, { maxItems: 64, description: 'quant: the types to compare, the first the baseline (f16,q8_0,q4_k_m).' }),
    files: Maybe(
      Type.Array(Type.Object({ name: Name, path: PathText }, Strict), { maxItems: 64 }),
      'quant: explicit files instead of model + quants.',
    ),
    workload: PathText,
    repeats: Type.Number(),
    requestsPerWindow: Nullable(Type.Number()),
    concurrency: Maybe(Type.Number(), 'Requests in flight within a window (quant, warmcold).'),
    profileName: Type.Optional(Name),
    settings: Type.Optional(Type.Array(LongText, { maxItems: 256 })),
    constraints: Maybe(QuantConstraintsSchema, 'quant: gates, budget and objective of the recommendation; sweep: its SLO.'),
    kldTextFile: Maybe(PathText, 'quant: a text file for the KL-divergence pass instead of one generated by the baseline.'),
    coldStarts: Maybe(Type.Number(), 'warmcold: fresh server starts for cold-process, spread over the windows.'),
    cooldownS: Maybe(
      Type.Number(),
      'Before each window after the first, wait up to this many seconds for the GPUs to return to their idle temperature and clocks (no GPU: no wait).',
    ),
    maxAnswerTokens: Maybe(Type.Number(), "Caps every item's answer at this many tokens (a shorter experiment with the same design)."),
    skipCacheReset: Type.Optional(
      Type.Boolean({ description: 'warmcold: leave the prompt cache on in cold-cache (its evidence must flag it).' }),
    ),
    vary: Maybe(Type.Object({ field: Name, values: Names }, Strict), 'sweep: the profile field to vary and its values.'),
    draftModel: Maybe(PathText, 'speculative: the draft model (a demo ref or GGUF path) that drafts for model.'),
    draftMax: Maybe(
      Type.Array(Type.Number(), { maxItems: 16 }),
      'speculative: the draft limits (tokens drafted per step) each compared with spec off; null for 4, 8 and 16.',
    ),
    loadConcurrencies: Maybe(Type.Array(Type.Number(), { maxItems: 64 }), 'sweep: the load levels (concurrency) every setting runs at.'),
    capacity: Maybe(
      Type.Object(
        {
          by: Type.Union([Type.Literal('rate'), Type.Literal('concurrency'), Type.Literal('users')], {
            description: 'Open-loop arrival rate, closed-loop concurrency, or concurrent users of a conversation workload.',
          }),
          percentile: Type.Number({ description: 'The percentile every SLO must hold at (50 to 99.9).' }),
          start: Nullable(Type.Number({ description: 'The first load tried; null for 1.' })),
          maxLoad: Nullable(Type.Number({ description: 'The highest load the search may try; null for the default.' })),
          keepCache: Type.Boolean({ description: 'Keep the prompt cache between steps (a workload meant to reuse prefixes).' }),
        },
        Strict,
      ),
      'capacity: how the load is searched; the SLO is constraints.slo and requestsPerWindow the requests per look.',
    ),
    kvCache: Maybe(
      Type.Object(
        {
          types: Type.Array(Name, {
            maxItems: 16,
            description: 'KV cache types, the first the baseline: q8_0 sets K and V, q8_0/f16 sets K and V apart.',
          }),
          contextSize: Nullable(Type.Number({ description: "The server's context in tokens; null keeps the profile's." })),
        },
        Strict,
      ),
      'kvcache: the cache types to compare and the context they must hold.',
    ),
  },
  { ...Strict, description: 'Everything an experiment can be asked for, from the UI or the CLI; optional fields take their defaults.' },
);
export type StartExperimentSpec = Static<typeof StartExperimentSpecSchema>;

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
