import type { ServerPurpose } from '../../shared/contract/server';
import type { WorkloadDef, WorkloadGroupDef } from './workload-types';

/**
 * What a workload asks of its server: generated answers (chat, completions), answers that may
 * call functions (items with `tools`), embeddings (`input` items, the embeddings generator) or
 * reranking (`query` items). A valid workload asks for one of embeddings, reranking or generation
 * only: the server is started for it, and their figures do not mix.
 */
export type WorkloadServes = ServerPurpose;

/** What one group asks for: the first of its items or generator that is not generation, else generation. */
export function groupServes(group: WorkloadGroupDef): WorkloadServes {
  if (group.generate !== undefined && 'embeddings' in group.generate) return 'embeddings';
  for (const item of group.items ?? []) {
    if (item.input !== undefined) return 'embeddings';
    if (item.query !== undefined) return 'rerank';
  }
  return 'generation';
}

/** What the whole workload asks for: the first group of embeddings or reranking decides; else any item offering tools. */
export function workloadServes(def: Pick<WorkloadDef, 'groups'>): WorkloadServes {
  for (const group of def.groups) {
    const serves = groupServes(group);
    if (serves !== 'generation') return serves;
  }
  return def.groups.some((group) => group.items?.some((item) => item.tools !== undefined)) ? 'tool-calls' : 'generation';
}
