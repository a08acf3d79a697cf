import type { ConditionResult } from '../../../../shared/contract/experiments';
import { EXPERIMENT_DEFAULTS } from '../../../../shared/experiment-defaults';
import type { KindGates } from '../../recommend';

/**
 * A KV cache experiment runs one file under every cache type, so its recommendation compares the
 * KV buffers the server allocated, when every condition has them (else the shared VRAM or file
 * size). A saving under EXPERIMENT_DEFAULTS.gates.minMemorySaving of the baseline's is not smaller.
 */
export const KV_CACHE_GATES: KindGates = {
  memory: (conditions: ConditionResult[]) =>
    conditions.every((condition) => condition.kv_cache_mib != null)
      ? {
          label: 'KV cache',
          value: (condition) => condition.kv_cache_mib!,
          smaller: (candidate, baseline) =>
            candidate.kv_cache_mib! < baseline.kv_cache_mib! * (1 - EXPERIMENT_DEFAULTS.gates.minMemorySaving),
          show: (condition) => `${condition.kv_cache_mib!.toFixed(1)} MiB`,
        }
      : null,
};
