import { SWEEP_WORKLOAD_FIELDS, type SweepWorkloadField } from '../../../../shared/contract/experiment-kinds/sweep';
import type { WorkloadDef, WorkloadGroupDef } from '../../../workload/workload-types';
import { invalidSpec } from '../../spec-checks';

/*
 * A sweep may vary a field of the workload instead of the server: how many texts each embeddings
 * request carries. Every setting then runs on the same server profile, and what changes is the batch
 * the server is handed, which is how an embeddings server's latency and inputs/s scale.
 */

/** The generator's own bound (resources/workload.schema.json). */
const MAX_INPUTS_PER_REQUEST = 2048;

/** Each value a whole number of texts per request, within the generator's bound. */
export function checkWorkloadFieldValues(field: SweepWorkloadField, values: readonly string[]): void {
  for (const value of values)
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_INPUTS_PER_REQUEST)
      invalidSpec(`vary ${field}: "${value}" is not a whole number of inputs from 1 to ${MAX_INPUTS_PER_REQUEST}`);
  if (new Set(values.map(Number)).size !== values.length) invalidSpec(`vary ${field}: a value is given twice`);
}

const generatesEmbeddings = (group: WorkloadGroupDef) => group.generate !== undefined && 'embeddings' in group.generate;

/** A workload fit for the field: one that generates embeddings requests, whose batch the sweep sets. */
export function checkWorkloadForField(field: SweepWorkloadField, workload: WorkloadDef): void {
  if (!workload.groups.some(generatesEmbeddings))
    invalidSpec(
      `vary ${field} needs a workload that generates embeddings requests (a group with generate: { embeddings: ... }, as the built-in ${SWEEP_WORKLOAD_FIELDS[field].workload}); ${workload.name} has none`,
    );
}

/**
 * The workload at one value: its embeddings generators, each sending `value` texts per request. Its
 * written items and other groups are left out, since their batch is fixed and would blur the one
 * the sweep sets.
 */
export function workloadAtValue(field: SweepWorkloadField, workload: WorkloadDef, value: string): WorkloadDef {
  checkWorkloadForField(field, workload);
  const groups = workload.groups.flatMap((group): WorkloadGroupDef[] =>
    group.generate && 'embeddings' in group.generate
      ? [{ ...group, generate: { embeddings: { ...group.generate.embeddings, [field]: Number(value) } } }]
      : [],
  );
  return { ...workload, name: `${workload.name} (${field}=${value})`, groups };
}
