import type { WarmColdProtocol } from '../../../../shared/contract/experiment-kinds/warmcold';
import type {
  CacheEvidence,
  ColdStarts,
  ConditionResult,
  ExperimentResult,
  ExperimentStopping,
  VerdictRow,
} from '../../../../shared/contract/experiments';
import { defaultColdStarts } from '../../../../shared/experiment-defaults';
import { ErrorCode } from '../../../../shared/errors';
import { AppError, throwIfCancelled } from '../../../core/errors';
import { summarize } from '../../../metrics/distribution';
import type { ManagedServer } from '../../../server/managed-server';
import type { RequestRow } from '../../../store/run-rows';
import { llamaServerTokenCounter } from '../../../workload/token-counter';
import type { ResolvedWorkload, WorkloadDef } from '../../../workload/workload-types';
import { cacheEvidence, PREFIX_HIT_SHARE, promptText, reusedTokens, sharedPrefixTokens, type CacheExpectation } from '../../cache-evidence';
import { conditionVerdicts, summarizeCondition } from '../../condition-summary';
import { closedWindowRequest, runWindow, settleExperiment, type SingleModelExperimentInputs } from '../../experiment-inputs';
import { spreadOverWindows } from '../../windows';
import { openName, runWindowRounds, verdictSettingsOf } from '../../window-rounds';
import { designLooks } from '../../../../shared/experiment-design';
import { verdictSettled } from '../../../metrics/sequential-verdicts';
import type { VerdictSettings } from '../../../metrics/window-verdicts';
import type { WindowCooldown } from '../../window-cooldown';

export type WarmColdCondition = 'cold-process' | 'cold-cache' | 'warm-cache';
export const WARM_COLD_CONDITIONS: readonly WarmColdCondition[] = ['cold-process', 'cold-cache', 'warm-cache'];

export interface WarmColdOptions extends SingleModelExperimentInputs {
  repeats: number;
  /** Run every window rather than stopping once the TTFT verdicts are decided. */
  fixed?: boolean;
  requestsPerWindow: number | null;
  concurrency: number;
  /** Fresh server starts for cold-process in all, spread over the windows; each answers one measured request. */
  coldStarts?: number;
  /** Deliberately leave the prompt cache on in cold-cache: the evidence must then flag contamination. */
  skipCacheReset?: boolean;
  signal?: AbortSignal;
  cooldown?: WindowCooldown | null;
  onStatus?: (line: string) => void;
}

/** Requests in one pass over a workload definition, generators included: the priming pass for warm-cache. */
export function definitionItemCount(def: WorkloadDef): number {
  return def.groups.reduce((sum, group) => {
    const written = (group.items ?? []).reduce((n, item) => n + (item.repeat ?? 1), 0);
    const generator = group.generate;
    let generated = 0;
    if (generator && 'synthetic' in generator) generated = generator.synthetic.count;
    else if (generator && 'prefix_families' in generator)
      generated = generator.prefix_families.prefixes * generator.prefix_families.suffixes;
    else if (generator && 'long_document' in generator) generated = generator.long_document.count;
    else if (generator && 'sharegpt' in generator) generated = generator.sharegpt.limit ?? 16;
    return sum + written + generated;
  }, 0);
}

/** Default fresh starts: enough measured requests for a verdict, and at least one per window. */

/** Why a condition's own evidence contradicts it, or null. */
export function contradiction(condition: WarmColdCondition, evidence: CacheEvidence, starts?: ColdStarts): string | null {
  const problems: string[] = [];
  if (evidence.contradicted > 0) {
    if (condition === 'cold-process')
      problems.push(`${evidence.contradicted} of ${evidence.measured} first requests after a fresh start reported cached prompt tokens`);
    if (condition === 'cold-cache')
      problems.push(`${evidence.contradicted} of ${evidence.measured} requests reused cached prompt tokens: the cache was not cold`);
    if (condition === 'warm-cache')
      problems.push(
        `${evidence.contradicted} of ${evidence.measured} requests reused less than ${Math.round(PREFIX_HIT_SHARE * 100)} % of their shared prefix: the cache was not warm`,
      );
  }
  const late = starts?.starts.filter((start) => start.requests_before > 0).length ?? 0;
  if (late > 0) problems.push(`${late} measured requests were not the first their fresh server answered`);
  return problems.length > 0 ? problems.join('; ') : null;
}

const fmt = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : `${value.toFixed(1)} ms`);

function verdictSentence(row: VerdictRow | undefined): string {
  if (!row) return 'no verdict';
  // The interval is at the level its (corrected) decision used, not necessarily 95 %.
  const ci = row.ci ? `, ${((row.confidence ?? 0.95) * 100).toFixed(1)} % CI ${row.ci[0].toFixed(1)} to ${row.ci[1].toFixed(1)}` : '';
  const difference = row.difference === null ? '' : ` (${row.difference >= 0 ? '+' : ''}${row.difference.toFixed(1)} ms${ci})`;
  return `${row.b} ${fmt(row.b_value)}${difference}: ${row.verdict}`;
}

/** What the experiment does, stored with it: the conditions in words and how cache use is proven. */
function warmColdProtocol(options: WarmColdOptions, startsPerWindow: number[], warmCacheRamMib: number): WarmColdProtocol {
  return {
    kind: 'warmcold',
    cooldown: options.cooldown?.describe() ?? null,
    model: options.model.ref,
    workload: options.workload.def.name,
    repeats: options.repeats,
    concurrency: options.concurrency,
    requests_per_window: options.requestsPerWindow,
    cold_starts: startsPerWindow.reduce((sum, starts) => sum + starts, 0),
    cold_starts_per_window: startsPerWindow,
    profile: options.profile,
    skip_cache_reset: options.skipCacheReset ?? false,
    conditions: {
      'cold-process':
        "a fresh llama-server per start (no probe, no warmup); only its first request, the workload's first item, is measured; spawn → ready recorded per start",
      'cold-cache': options.skipCacheReset
        ? 'running server; cache reset SKIPPED on purpose'
        : 'running server, --cache-ram 0, cache_prompt: false on every request',
      'warm-cache': `running server, prompt cache on (--cache-ram ${warmCacheRamMib}), primed once by a pass over the workload; a request may reuse more than its shared prefix (the primed cache holds the whole prompt)`,
    },
    evidence:
      'per measured request from usage.prompt_tokens_details.cached_tokens and timings.cache_n; missing counts are unknown, never 0; a condition is contaminated when any measured request contradicts it',
  };
}

/** One fresh start as the result reports it: spawn → ready from the server record, and its one measured request. */
function coldStartOf(runs: WarmColdOptions['runs'], runId: string): ColdStarts['starts'][number] {
  const serverJson = runs.getRun(runId)?.server_json;
  const ready = serverJson
    ? (JSON.parse(serverJson) as { coldStart?: { spawnToReadyMs?: number } | null }).coldStart?.spawnToReadyMs
    : undefined;
  const rows = runs.requestsForSummary(runId).sort((a, b) => a.seq - b.seq);
  const measured = rows.find((row) => row.warmup === 0);
  return {
    run_id: runId,
    spawn_to_ready_ms: typeof ready === 'number' ? ready : null,
    ttft_ms: measured?.ttft_ms ?? null,
    cached_tokens: measured ? reusedTokens(measured) : null,
    requests_before: measured ? rows.filter((row) => row.seq < measured.seq).length : 0,
  };
}

/** The recommendation's words: TTFT against cold-cache, the cost of a fresh process, and what makes it inconclusive. */
function warmColdReason(conditions: ConditionResult[], verdicts: ExperimentResult['verdicts'], coldStarts: ColdStarts): string {
  const ttft = (b: WarmColdCondition) => verdicts.find((row) => row.metric === 'ttft_ms p50' && row.b === b);
  const contaminated = conditions.filter((condition) => condition.contaminated);
  const unproven = conditions.filter((condition) => !condition.contaminated && (condition.cache_evidence?.unknown ?? 0) > 0);
  const baseline =
    ttft('warm-cache')?.a_value ?? conditions.find((condition) => condition.name === 'cold-cache')?.metrics.ttft_ms.p50 ?? null;
  const findings = `TTFT p50 against cold-cache (${fmt(baseline)}): ${verdictSentence(ttft('warm-cache'))}; ${verdictSentence(ttft('cold-process'))}. A fresh process first spends spawn → ready p50 ${fmt(coldStarts.spawn_to_ready_ms.p50)} (${coldStarts.starts.length} starts).`;
  const caveats = [
    ...contaminated.map((condition) => `${condition.name} is contaminated (${condition.contamination_reason})`),
    ...unproven.map((condition) => `${condition.name} is unproven for some requests (${condition.cache_evidence!.summary})`),
  ];
  if (contaminated.length > 0) return `Not conclusive: ${caveats.join('; ')}. As measured: ${findings}`;
  return caveats.length > 0 ? `${findings} Caveat: ${caveats.join('; ')}.` : findings;
}

type ConditionSummary = ReturnType<typeof summarizeCondition> & { condition: WarmColdCondition };

/**
 * The TTFT and other verdicts against cold-cache. A cold-process window is every fresh start of
 * that window, pooled: the starts are its replicates, and more of them come from --cold-starts.
 */
function warmColdVerdicts(
  summaries: ConditionSummary[],
  contamination: ReadonlyMap<string, string | null>,
  coldWindowOf: Map<string, number>,
  repeats: number,
  settings: VerdictSettings,
): ExperimentResult['verdicts'] {
  const windowsOf = (entry: ConditionSummary) => {
    if (entry.condition !== 'cold-process') return entry.windows;
    const grouped: RequestRow[][] = Array.from({ length: repeats }, () => []);
    entry.result.run_ids.forEach((runId, index) => grouped[coldWindowOf.get(runId) ?? 0]!.push(...(entry.windows[index] ?? [])));
    return grouped.filter((rows) => rows.length > 0);
  };
  const byName = new Map(summaries.map((entry) => [entry.condition, entry]));
  const order: WarmColdCondition[] = ['cold-cache', 'warm-cache', 'cold-process'];
  return conditionVerdicts(
    order.map((name) => ({ name, windows: windowsOf(byName.get(name)!), contaminated: contamination.get(name) ?? null })),
    settings,
  ).map((row) =>
    row.b === 'cold-process' && row.note
      ? {
          ...row,
          note: row.note.replace(
            /cold-process has a window of (\d+) \(raise --requests\)/,
            'cold-process has a window of $1 fresh start(s) (raise --cold-starts)',
          ),
        }
      : row,
  );
}

/**
 * Fresh starts per window. The first look's windows hold the starts a verdict needs, so a sequential
 * experiment that stops there has made as many as a fixed one; each later window adds the fixed
 * design's share of a window (at least one).
 */
function coldStartsPerWindow(options: WarmColdOptions): number[] {
  const coldStarts = options.coldStarts ?? defaultColdStarts(options.repeats);
  if (!Number.isInteger(coldStarts) || coldStarts < options.repeats)
    throw new AppError(
      ErrorCode.InvalidInput,
      `cold starts (${coldStarts}) must be a whole number of at least one per window (${options.repeats})`,
    );
  const firstLook = designLooks({ repeats: options.repeats, fixed: options.fixed ?? false })[0]!;
  const firstStarts = spreadOverWindows(coldStarts, firstLook);
  const later = Math.max(1, Math.floor(coldStarts / options.repeats));
  return Array.from({ length: options.repeats }, (_, window) => firstStarts[window] ?? later);
}

/** The TTFT verdicts still open: the answer rests on how much a warm cache and a cold process change the first token. */
function openTtftVerdicts(
  options: WarmColdOptions,
  runIds: Map<WarmColdCondition, string[]>,
  coldWindowOf: Map<string, number>,
  settings: VerdictSettings,
): string[] {
  const summaries = WARM_COLD_CONDITIONS.map((condition) => ({
    condition,
    ...summarizeCondition(options.runs, condition, runIds.get(condition)!),
  }));
  // The cold conditions' own cache evidence needs no tokenizer, so a look withholds what the result will;
  // warm-cache's is judged with the result.
  const contamination = new Map(
    summaries.map(({ condition, result, rows }) => {
      const evidence = condition === 'warm-cache' ? null : contradiction(condition, cacheEvidence(rows, { kind: 'none' }));
      const reasons = [result.contaminated ? result.contamination_reason : null, evidence].filter(Boolean);
      return [result.name, reasons.length > 0 ? reasons.join('; ') : null];
    }),
  );
  const rows = warmColdVerdicts(summaries, contamination, coldWindowOf, options.repeats, settings);
  return rows.filter((row) => row.metric.startsWith('ttft_ms ') && !verdictSettled(row)).map(openName);
}

/**
 * Warm against cold, each condition proven request by request with the server's own cache counts:
 * - cold-process: fresh servers, each measured on exactly one request, the first it ever answers;
 * - cold-cache: one running server, host prompt cache off (`--cache-ram 0`) and `cache_prompt: false`;
 * - warm-cache: one running server, prompt cache on, primed by one pass over the workload.
 * cold-cache is the baseline of the TTFT verdicts.
 */
export async function runWarmCold(options: WarmColdOptions): Promise<ExperimentResult> {
  const startsPerWindow = coldStartsPerWindow(options);
  const warmProfile = { ...options.profile, cacheRamMib: options.profile.cacheRamMib === 0 ? 8192 : options.profile.cacheRamMib };
  const coldProfile = options.skipCacheReset ? options.profile : { ...options.profile, cacheRamMib: 0 };
  const protocol = warmColdProtocol(options, startsPerWindow, warmProfile.cacheRamMib);
  const experimentId = options.experiments.create('warmcold', protocol);
  const runIds = new Map<WarmColdCondition, string[]>(WARM_COLD_CONDITIONS.map((condition) => [condition, []]));
  const coldWindowOf = new Map<string, number>();
  const starts: ColdStarts['starts'] = [];
  const longLived = new Map<WarmColdCondition, ManagedServer>();
  let resolved: ResolvedWorkload | null = null;
  let primed = false;

  const serverFor = async (condition: 'cold-cache' | 'warm-cache') => {
    let server = longLived.get(condition);
    if (!server) {
      server = await options.servers.prepare({
        modelRef: options.model.ref,
        profile: condition === 'cold-cache' ? coldProfile : warmProfile,
      });
      // Registered before it starts, so a failed start is still stopped on the way out.
      longLived.set(condition, server);
      const ready = await server.start();
      if (ready.state !== 'ready') throw new AppError(ErrorCode.ServerStartFailed, `${condition} server: ${ready.fault?.message}`);
    }
    return server;
  };
  try {
    return await settleExperiment(options, experimentId, async () => {
      const runOne = async (window: number, condition: WarmColdCondition) => {
        throwIfCancelled(options.signal);
        if (condition === 'cold-process') {
          for (const measured of await coldProcessWindow(options, experimentId, window, startsPerWindow[window]!)) {
            resolved ??= measured.workload;
            starts.push(measured.start);
            runIds.get(condition)!.push(measured.runId);
            coldWindowOf.set(measured.runId, window);
          }
          return;
        }
        options.onStatus?.(`window ${window + 1}/${options.repeats}: ${condition}`);
        const server = await serverFor(condition);
        // The host cache holds every primed prompt across windows, so one priming pass serves them all.
        const warmup = condition === 'warm-cache' && !primed ? definitionItemCount(options.workload.def) : 0;
        await options.cooldown?.beforeWindow(options.onStatus);
        const result = await runWindow(
          options,
          { experimentId, condition, window },
          {
            ...closedWindowRequest({ kind: 'server', server, modelRef: options.model.ref, modelPath: options.model.path }, options, null),
            warmup,
            extraBody: condition === 'cold-cache' && !options.skipCacheReset ? { cache_prompt: false } : undefined,
          },
        );
        if (condition === 'warm-cache') primed = true;
        resolved ??= result.workload;
        runIds.get(condition)!.push(result.summary.run_id);
      };
      const stopping = await runWindowRounds(
        WARM_COLD_CONDITIONS,
        { repeats: options.repeats, fixed: options.fixed ?? false },
        runOne,
        (settings) => openTtftVerdicts(options, runIds, coldWindowOf, settings),
        options.onStatus,
      );
      return judgeWarmCold(options, {
        stopping,
        experimentId,
        protocol,
        runIds,
        starts,
        coldWindowOf,
        resolved,
        warmServer: longLived.get('warm-cache'),
      });
    });
  } finally {
    await Promise.allSettled([...longLived.values()].map((server) => server.stop()));
  }
}

/** One cold-process window: fresh servers, each measured on the first and only request it ever answers. */
async function coldProcessWindow(options: WarmColdOptions, experimentId: string, window: number, startCount: number) {
  const measured: { runId: string; start: ColdStarts['starts'][number]; workload: ResolvedWorkload }[] = [];
  for (let start = 0; start < startCount; start++) {
    options.onStatus?.(`window ${window + 1}/${options.repeats}: cold-process, fresh start ${start + 1}/${startCount}`);
    // No probe and no warmup: the one measured request is the first the fresh process sees.
    await options.cooldown?.beforeWindow(options.onStatus);
    const result = await runWindow(
      options,
      { experimentId, condition: 'cold-process', window },
      {
        target: {
          kind: 'model',
          modelRef: options.model.ref,
          modelPath: options.model.path,
          profile: options.profile,
          coldStartProbe: false,
        },
        load: { mode: 'closed', concurrency: 1 },
        stop: { requests: 1, durationMs: null },
        warmup: 0,
        slo: null,
      },
    );
    const runId = result.summary.run_id;
    measured.push({ runId, start: coldStartOf(options.runs, runId), workload: result.workload });
  }
  return measured;
}

/** What the windows measured, judged: each condition proven by its cache evidence, the cold starts, the verdicts and the reason. */
async function judgeWarmCold(
  options: WarmColdOptions,
  measured: {
    experimentId: string;
    protocol: ReturnType<typeof warmColdProtocol>;
    runIds: Map<WarmColdCondition, string[]>;
    starts: ColdStarts['starts'];
    coldWindowOf: Map<string, number>;
    resolved: ResolvedWorkload | null;
    warmServer: ManagedServer | undefined;
    stopping: ExperimentStopping;
  },
): Promise<ExperimentResult> {
  const { starts, resolved, warmServer } = measured;
  // The warm server's tokenizer is the one whose cache counts are being judged.
  const items = (resolved?.groups ?? []).flatMap((group) => group.items).map((item) => ({ id: item.id, text: promptText(item) }));
  const prefixTokens = warmServer?.address
    ? await sharedPrefixTokens(items, llamaServerTokenCounter(warmServer.address))
    : new Map<string, number | null>();
  const expectations: Record<WarmColdCondition, CacheExpectation> = {
    'cold-process': { kind: 'none' },
    'cold-cache': { kind: 'none' },
    'warm-cache': { kind: 'prefix', prefixTokens },
  };

  const summaries = WARM_COLD_CONDITIONS.map((condition) => ({
    condition,
    ...summarizeCondition(options.runs, condition, measured.runIds.get(condition)!),
  }));
  const coldStartsResult: ColdStarts = {
    starts,
    spawn_to_ready_ms: summarize(starts.flatMap((start) => (start.spawn_to_ready_ms === null ? [] : [start.spawn_to_ready_ms]))),
    ttft_ms: summarize(starts.flatMap((start) => (start.ttft_ms === null ? [] : [start.ttft_ms]))),
  };
  const conditions: ConditionResult[] = summaries.map(({ condition, result, rows }) => {
    const evidence = cacheEvidence(rows, expectations[condition]);
    // Contamination found elsewhere (competing processes) stands beside the cache evidence's own.
    const reasons = [
      result.contaminated ? result.contamination_reason : null,
      contradiction(condition, evidence, condition === 'cold-process' ? coldStartsResult : undefined),
    ].filter((text): text is string => Boolean(text));
    return {
      ...result,
      contaminated: result.contaminated || reasons.length > 0,
      contamination_reason: reasons.length > 0 ? reasons.join('; ') : null,
      cache_evidence: evidence,
      ...(condition === 'cold-process'
        ? {
            cold_starts: coldStartsResult,
            cold_start_ms: starts.flatMap((start) =>
              start.spawn_to_ready_ms !== null && start.ttft_ms !== null ? [start.spawn_to_ready_ms + start.ttft_ms] : [],
            ),
          }
        : {}),
    };
  });

  const contamination = new Map(conditions.map((condition) => [condition.name, condition.contamination_reason]));
  const verdicts = warmColdVerdicts(summaries, contamination, measured.coldWindowOf, options.repeats, verdictSettingsOf(measured.stopping));
  const reason = warmColdReason(conditions, verdicts, coldStartsResult);
  const result: ExperimentResult = {
    experiment_id: measured.experimentId,
    kind: 'warmcold',
    status: 'completed',
    protocol: measured.protocol,
    conditions,
    verdicts,
    recommendation: { choice: null, reason, excluded: [] },
    stopping: measured.stopping,
  };
  return result;
}
