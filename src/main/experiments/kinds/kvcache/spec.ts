import type { KvCacheSpec } from '../../../../shared/contract/experiment-kinds/kvcache';
import { ErrorCode } from '../../../../shared/errors';
import { AppError } from '../../../core/errors';
import { cacheConditions, DEFAULT_CACHE_TYPES, type CacheCondition } from './cache-conditions';

/** The largest context a kvcache experiment may ask of the server: llama.cpp's own limit is far above what fits anywhere. */
const MAX_CONTEXT = 1_048_576;

/** The conditions a kvcache spec names (the default types where it names none); a spec that names bad ones is refused. */
export function kvCacheConditionsOf(spec: KvCacheSpec): CacheCondition[] {
  const checked = cacheConditions(spec.kvCache?.types?.length ? spec.kvCache.types : DEFAULT_CACHE_TYPES);
  if ('problem' in checked) throw new AppError(ErrorCode.InvalidInput, `kvCache.types: ${checked.problem}`);
  return checked.conditions;
}

/** What a kvcache spec must hold before anything is read or started. */
export function checkKvCacheShape(spec: KvCacheSpec): void {
  const invalid = (message: string): never => {
    throw new AppError(ErrorCode.InvalidInput, message);
  };
  if (spec.kvCache != null && (typeof spec.kvCache !== 'object' || !Array.isArray(spec.kvCache.types)))
    invalid('kvCache must be { types: ["f16", "q8_0"], contextSize: null }');
  kvCacheConditionsOf(spec);
  const context = spec.kvCache?.contextSize;
  if (context != null && !(Number.isInteger(context) && context >= 256 && context <= MAX_CONTEXT))
    invalid(`kvCache.contextSize must be a whole number of tokens from 256 to ${MAX_CONTEXT}, got ${JSON.stringify(context)}`);
}
