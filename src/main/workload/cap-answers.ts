import type { WorkloadDef } from './workload-types';

/**
 * The workload with every answer capped at `cap` tokens: items, defaults and generated prefix
 * families. A shorter experiment keeps its statistical design (windows, requests per window);
 * the cap changes the workload revision recorded with every run, so capped and uncapped runs
 * are never compared as the same workload.
 */
export function capAnswerTokens(def: WorkloadDef, cap: number): WorkloadDef {
  const capped = (value: number | undefined) => Math.min(value ?? cap, cap);
  return {
    ...def,
    defaults: { ...def.defaults, max_tokens: capped(def.defaults?.max_tokens) },
    groups: def.groups.map((group) => ({
      ...group,
      items: group.items?.map((item) => (item.max_tokens === undefined ? item : { ...item, max_tokens: capped(item.max_tokens) })),
      generate:
        group.generate && 'prefix_families' in group.generate
          ? { prefix_families: { ...group.generate.prefix_families, output_tokens: capped(group.generate.prefix_families.output_tokens) } }
          : group.generate,
    })),
  };
}
