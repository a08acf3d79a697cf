import type { DecisionRecord, EventSink, ExperimentJobState, ExperimentsService } from '../../shared/contract';
import type { EngineInfo } from '../../shared/contract/engine';
import type { ExperimentResult } from '../../shared/contract/experiments';
import { ErrorCode } from '../../shared/errors';
import { AppError, toErrorShape } from '../core/errors';
import { ExperimentStore } from '../store/experiment-store';
import { checkQuantFiles, runQuantExperiment } from '../experiments/quantization';
import { runWarmCold } from '../experiments/warm-cold';
import type { ServerManager } from '../server/server-manager';
import type { AppStore } from '../store/app-store';
import { isDemoRef } from '../models/demo-models';
import { readWorkloadFile } from '../workload/parse-workload';
import { resolveModelWithin, workloadPathWithin, type ServiceAccess } from './access';
import { newJobId } from './job-ids';

export function createExperimentsService(deps: { store: AppStore; access: ServiceAccess; servers: ServerManager; engine: () => Promise<EngineInfo>; events: EventSink }): ExperimentsService & { dispose(): Promise<void> } {
  const experiments = new ExperimentStore(deps.store.db);
  const jobs = new Map<string, { controller: AbortController; done: Promise<void> }>();

  return {
    async start(spec) {
      if (spec.kind !== 'quant' && spec.kind !== 'warmcold') throw new AppError(ErrorCode.InvalidInput, `kind must be quant or warmcold, got ${JSON.stringify(spec.kind)}`);
      if (!Number.isInteger(spec.repeats) || spec.repeats < 1 || spec.repeats > 50) throw new AppError(ErrorCode.InvalidInput, 'repeats must be a whole number from 1 to 50');
      if (spec.requestsPerWindow !== null && (!Number.isInteger(spec.requestsPerWindow) || spec.requestsPerWindow < 1)) throw new AppError(ErrorCode.InvalidInput, 'requests per window must be a positive whole number');
      const files = spec.kind === 'quant' && Array.isArray(spec.files) && spec.files.length > 0 ? checkQuantFiles(spec.files.map((entry) => ({ name: String(entry?.name ?? ''), file: deps.access.paths.check(String(entry?.path ?? ''), 'model') })), 'files') : null;
      if (spec.kind === 'quant' && !files && (!Array.isArray(spec.quants) || spec.quants.length < 2)) throw new AppError(ErrorCode.InvalidInput, 'a quantization experiment needs two or more quantizations');
      const file = workloadPathWithin(deps.access, spec.workload);
      const workload = { def: readWorkloadFile(file), file };
      const modelPath = files ? files[0]!.file : await resolveModelWithin(deps.access, spec.model);
      const jobId = newJobId();
      const controller = new AbortController();
      const state: ExperimentJobState = { jobId, phase: 'running', message: 'starting', result: null, error: null };
      const emit = () => deps.events.emit('experiment.progress', { ...state });
      const common = { runs: deps.store.runs, experiments, servers: deps.servers, engine: deps.engine, workload, profile: deps.store.profiles.get('default'), repeats: spec.repeats, requestsPerWindow: spec.requestsPerWindow, concurrency: 1, signal: controller.signal, onStatus: (line: string) => { state.message = line; emit(); } };
      // Registered before the work starts, so a cancel that arrives at once is not lost.
      const job = { controller, done: Promise.resolve() };
      jobs.set(jobId, job);
      job.done = (async () => {
        try {
          state.result = spec.kind === 'quant'
            ? await runQuantExperiment({ ...common, baseRef: files ? files[0]!.file : isDemoRef(spec.model) ? spec.model : modelPath, quants: spec.quants, files, constraints: { vramBudgetMib: null, minAgreement: null, minAcceptance: null, slo: null }, kldText: null })
            : await runWarmCold({ ...common, model: { ref: spec.model, path: modelPath } });
          state.phase = 'finished';
          state.message = 'finished';
        } catch (error) {
          if (controller.signal.aborted) {
            state.phase = 'cancelled';
            state.message = 'cancelled: stored as interrupted, with the windows that finished';
          } else {
            state.phase = 'failed';
            state.error = toErrorShape(error);
            state.message = state.error.message;
          }
        } finally {
          emit();
          jobs.delete(jobId);
        }
      })();
      emit();
      return { jobId };
    },
    async cancel(jobId) {
      jobs.get(jobId)?.controller.abort();
    },
    async list() {
      return experiments.list().map((row) => ({
        experimentId: row.id, kind: row.kind, status: row.status, createdAt: row.created_at,
        recommendation: row.result_json ? ((JSON.parse(row.result_json) as ExperimentResult).recommendation.reason) : null,
      }));
    },
    async get(experimentId) {
      const experiment = experiments.get(experimentId);
      if (!experiment) throw new AppError(ErrorCode.NotFound, `No experiment ${experimentId}`);
      return experiment.result;
    },
    async decide(experimentId, chosen, reason, decidedBy): Promise<DecisionRecord> {
      const experiment = experiments.get(experimentId);
      if (!experiment?.result) throw new AppError(ErrorCode.NotFound, `No finished experiment ${experimentId}`);
      const condition = experiment.result.conditions.find((candidate) => candidate.name === chosen);
      if (!condition) throw new AppError(ErrorCode.InvalidInput, `Choose one of ${experiment.result.conditions.map((candidate) => candidate.name).join(', ')}`);
      if (!reason.trim()) throw new AppError(ErrorCode.InvalidInput, 'A decision needs a reason');
      const record = {
        experiment_id: experiment.id, kind: experiment.kind, chosen, chosen_run_ids: condition.run_ids,
        criteria: (experiment.result.protocol as { constraints?: unknown }).constraints ?? null, recommendation: experiment.result.recommendation,
        reason, decided_by: decidedBy || 'unknown', decided_at: new Date().toISOString(),
      };
      const id = experiments.recordDecision(experiment.id, record.decided_by, record);
      return { decision_id: id, ...record };
    },
    decisions: async () => experiments.decisions(),
    async dispose() {
      for (const job of jobs.values()) job.controller.abort();
      await Promise.allSettled([...jobs.values()].map((job) => job.done));
    },
  };
}
