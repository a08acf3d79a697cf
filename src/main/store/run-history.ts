import crypto from 'node:crypto';
import { metricSpecProblem, readMetricSpec, type HistoryBuild, type MetricSpec } from '../../shared/contract/history';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import type { Db } from './database';

/** The columns a history reads: identity, engine and summary, never the requests' text. */
export interface HistoryRunRow {
  id: string;
  status: string;
  started_at: string;
  model_ref: string | null;
  model_path?: string | null;
  model_sha256: string | null;
  workload_name: string | null;
  workload_revision: string | null;
  engine_json: string | null;
  manifest_json: string;
  summary_json: string | null;
}

export function parseMetricSpec(text: string): MetricSpec {
  const spec = readMetricSpec(text);
  if (!spec) throw new AppError(ErrorCode.InvalidInput, metricSpecProblem(text));
  return spec;
}

export function parseJson(text: string | null): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // A record that cannot be read is treated as one that says nothing.
    return null;
  }
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON with every object's keys sorted, so two profiles written in a different key order compare equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => canonicalJson(item ?? null)).join(',')}]`;
  if (isRecord(value))
    return `{${Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

export interface ManifestFacts {
  profile: Record<string, unknown> | null;
  profileName: string | null;
  load: { mode: string; concurrency?: unknown; rate?: unknown } | null;
}

export function manifestFacts(manifestJson: string): ManifestFacts {
  const manifest = parseJson(manifestJson);
  const target = isRecord(manifest) && isRecord(manifest.target) ? manifest.target : null;
  const profile = target && isRecord(target.profile) ? target.profile : null;
  const load = isRecord(manifest) && isRecord(manifest.load) && typeof manifest.load.mode === 'string' ? manifest.load : null;
  return {
    profile,
    profileName: typeof profile?.name === 'string' ? profile.name : null,
    load: load ? { mode: load.mode as string, concurrency: load.concurrency, rate: load.rate } : null,
  };
}

/** The load as the comparison sees it: the mode and its one level, nothing the level does not change. */
function loadIdentity(load: ManifestFacts['load']): Record<string, unknown> | null {
  if (!load) return null;
  return load.mode === 'closed' ? { mode: 'closed', concurrency: load.concurrency ?? null } : { mode: load.mode, rate: load.rate ?? null };
}

export function describeLoad(load: ManifestFacts['load']): string {
  if (!load) return 'load not recorded';
  return load.mode === 'closed'
    ? `closed, concurrency ${String(load.concurrency ?? '?')}`
    : `${load.mode}, ${String(load.rate ?? '?')} req/s`;
}

/**
 * The comparable configuration of a run: model file, workload revision, server profile (by
 * content, without its name, whose change alone changes nothing that runs) and load. Runs with
 * the same key differ only in what is not part of it: the engine build, the driver, the day.
 */
export function configurationKey(run: Pick<HistoryRunRow, 'model_sha256' | 'workload_revision' | 'manifest_json'>): string {
  const facts = manifestFacts(run.manifest_json);
  const profile = facts.profile ? Object.fromEntries(Object.entries(facts.profile).filter(([key]) => key !== 'name')) : null;
  const identity = canonicalJson({
    model_sha256: run.model_sha256,
    workload_revision: run.workload_revision,
    profile,
    load: loadIdentity(facts.load),
  });
  return crypto.createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

/** The engine build a run was served by; runs without engine facts share one "unknown build". */
export function engineBuildOf(engineJson: string | null): Pick<HistoryBuild, 'build' | 'label' | 'commit' | 'backend'> {
  const engine = parseJson(engineJson);
  const commit = isRecord(engine) && typeof engine.commit === 'string' && engine.commit ? engine.commit : null;
  const backend = isRecord(engine) && typeof engine.backend === 'string' && engine.backend ? engine.backend : null;
  if (commit === null && backend === null) return { build: 'unknown', label: 'unknown build', commit, backend };
  return {
    build: `${commit ?? '?'}|${backend ?? '?'}`,
    label: `${commit ?? 'unknown commit'} · ${backend ?? 'unknown backend'}`,
    commit,
    backend,
  };
}

/** The one store query: runs matching the filters (any status), oldest first, without their requests. */
export function matchingRuns(db: Db, filter: { model?: string | null; workload?: string | null }): HistoryRunRow[] {
  const clauses: string[] = [];
  // A model by its file hash, or by the reference or path it was started with; a workload by revision or name.
  if (filter.model) clauses.push('(model_sha256 = @model OR model_ref = @model OR model_path = @model)');
  if (filter.workload) clauses.push('(workload_revision = @workload OR workload_name = @workload)');
  return db
    .prepare(
      `SELECT id, status, started_at, model_ref, model_path, model_sha256, workload_name, workload_revision, engine_json, manifest_json, summary_json
       FROM runs ${clauses.length ? `WHERE ${clauses.join(' AND ')}` : ''} ORDER BY started_at, rowid`,
    )
    .all({ model: filter.model ?? null, workload: filter.workload ?? null }) as HistoryRunRow[];
}
