import type { ResolvedItem, ResolvedWorkload } from '../../src/main/workload/workload-types';

/** A workload item as a resolved workload holds it: no prompt, 16 tokens at most, no checks; patch what a case needs. */
export function resolvedItem(patch: Partial<ResolvedItem> = {}): ResolvedItem {
  return {
    id: 'a',
    group: 'g',
    messages: null,
    prompt: null,
    sampling: { max_tokens: 16 },
    response_format: null,
    repeat: 1,
    weight: 1,
    checks: [],
    target_input_tokens: null,
    input_tokens_exact: null,
    ...patch,
  };
}

/** A workload of one group holding `items`, named after the first item's group. */
export function oneGroupWorkload(items: ResolvedItem[]): ResolvedWorkload {
  return { name: 'w', description: '', revision: 'r', source: 'test', groups: [{ name: items[0]!.group, items }] };
}
