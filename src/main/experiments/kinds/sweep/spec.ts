import { isSweepWorkloadField, SWEEP_WORKLOAD_FIELDS, type SweepSpec } from '../../../../shared/contract/experiment-kinds/sweep';
import type { WorkloadDef } from '../../../workload/workload-types';
import { invalidSpec, wholeNumber } from '../../spec-checks';
import { checkWorkloadFieldValues, checkWorkloadForField } from './workload-field';

/**
 * A sweep names one field with two or more values, and optionally the load levels to run each at:
 * a profile field (each value a server setting), or a workload field (each value a batch of inputs).
 */
export function checkSweepShape(spec: SweepSpec): void {
  const vary = spec.vary;
  if (!vary || typeof vary.field !== 'string' || !Array.isArray(vary.values) || vary.values.length < 2)
    invalidSpec('a sweep needs vary: a profile field (or inputs_per_request) and at least two values');
  if (isSweepWorkloadField(vary.field)) checkWorkloadFieldValues(vary.field, vary.values);
  for (const level of spec.loadConcurrencies ?? []) wholeNumber('load concurrency', level, 1, 4096);
}

/** The profile settings a sweep applies, one list per value: none where it varies the workload. */
export const sweepSettings = (spec: SweepSpec): { label: string; settings: string[] }[] =>
  isSweepWorkloadField(spec.vary?.field)
    ? []
    : spec.vary!.values.map((value) => ({ label: "the sweep's", settings: [`${spec.vary!.field}=${value}`] }));

/** A sweep of a workload field runs the built-in workload that has it (embeddings) unless told otherwise. */
export const sweepDefaultWorkload = (spec: SweepSpec, fallback: string): string =>
  isSweepWorkloadField(spec.vary?.field) ? SWEEP_WORKLOAD_FIELDS[spec.vary.field].workload : fallback;

export function checkSweepWorkload(spec: SweepSpec, workload: WorkloadDef): void {
  if (isSweepWorkloadField(spec.vary?.field)) checkWorkloadForField(spec.vary.field, workload);
}
