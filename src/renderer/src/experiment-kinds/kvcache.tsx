import type { ExperimentResult } from '../../../shared/contract/experiments';
import { pct } from '../components/format';
import { TableScroll } from '../components/TableScroll';
import type { ExperimentKindForm, KindFieldProps } from './form-state';
import { list, number } from './form-state';
import { FixedDesignField } from './fixed-design-field';

/** The kvcache fields of the experiment form: the model, the cache types and the context they must hold. */
function KvCacheSubject({ text, modelField }: KindFieldProps) {
  return (
    <>
      {modelField}
      <label>
        Cache types, the first the baseline <input {...text('cacheTypes', 'cache types')} size={24} placeholder="f16,q8_0,q4_0" />
      </label>
      <label>
        Context (tokens) <input {...text('contextSize', 'cache context')} size={8} placeholder="the profile's" />
      </label>
      <small>A quantized V cache needs flash attention: every condition then runs with it, the baseline too.</small>
    </>
  );
}

export const KVCACHE_FORM: ExperimentKindForm<'kvcache'> = {
  Subject: KvCacheSubject,
  Design: FixedDesignField,
  constraints: 'gates',
  specFields: (form) => ({
    kvCache: { types: list(form.cacheTypes), contextSize: number(form.contextSize) },
    ...(form.fixedDesign ? { fixed: true } : {}),
  }),
};

/** What a KV cache experiment found per cache type: memory, quality against the baseline cache, acceptance per group. */
export function KvCacheResult({ result }: { result: ExperimentResult }) {
  const groups = [...new Set(result.conditions.flatMap((condition) => Object.keys(condition.acceptance_by_group ?? {})))];
  const flash = result.kind === 'kvcache' ? result.protocol.flash_attention : undefined;
  return (
    <>
      <TableScroll>
        <table data-testid="kvcache-table">
          <thead>
            <tr>
              <th>Cache</th>
              <th>KV memory</th>
              <th>Token agreement</th>
              <th>KLD</th>
              <th>Same top token</th>
              {groups.map((group) => (
                <th key={group}>Accepted: {group}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {result.conditions.map((condition) => (
              <tr key={condition.name}>
                <td>
                  {condition.name}
                  {condition.cache_types && condition.cache_types.k !== condition.cache_types.v && (
                    <small>
                      {' '}
                      (K {condition.cache_types.k}, V {condition.cache_types.v})
                    </small>
                  )}
                </td>
                <td>{condition.kv_cache_mib == null ? '—' : `${condition.kv_cache_mib.toFixed(1)} MiB`}</td>
                <td title={condition.token_agreement?.error ?? undefined}>{pct(condition.token_agreement?.mean ?? null)}</td>
                <td title={condition.kld_error ?? undefined}>{condition.kld_mean == null ? '—' : condition.kld_mean.toFixed(4)}</td>
                <td>{pct(condition.same_top_p ?? null)}</td>
                {groups.map((group) => {
                  const entry = condition.acceptance_by_group?.[group];
                  return <td key={group}>{entry ? `${entry.accepted}/${entry.judged}` : '—'}</td>;
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {flash && (
        <p>
          <small>Flash attention: {flash}.</small>
        </p>
      )}
    </>
  );
}
