import type { WorkloadDef, WorkloadGroupDef } from './workload-types';

/** Whether a group sends embeddings requests: items with `input`, or the embeddings generator. */
export function isEmbeddingsGroup(group: WorkloadGroupDef): boolean {
  return (group.items ?? []).some((item) => item.input !== undefined) || (group.generate !== undefined && 'embeddings' in group.generate);
}

/** Whether a workload sends embeddings requests (a valid one then sends nothing else). */
export function isEmbeddingsWorkload(def: Pick<WorkloadDef, 'groups'>): boolean {
  return def.groups.some(isEmbeddingsGroup);
}
