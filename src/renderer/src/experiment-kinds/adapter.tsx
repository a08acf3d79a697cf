import { loraAdapterEntry } from '../../../shared/lora-adapter-entry';
import type { ExperimentResult } from '../../../shared/contract/experiments';
import { pct } from '../components/format';
import { TableScroll } from '../components/TableScroll';
import type { ExperimentFormState, ExperimentKindForm, KindFieldProps } from './form-state';
import { list } from './form-state';
import { FixedDesignField } from './fixed-design-field';

/** The adapter fields of the experiment form: the base model and the adapters applied to it. */
function AdapterSubject({ text, modelField, form, set }: KindFieldProps) {
  return (
    <>
      {modelField}
      <label>
        LoRA adapters, each FILE or FILE@SCALE <input {...text('adapters', 'adapters')} size={36} placeholder="demo:lora,demo:lora@0.5" />
      </label>
      <label>
        Served{' '}
        <select
          aria-label="adapter serving"
          value={form.adapterServing}
          onChange={(event) => set('adapterServing', event.target.value as ExperimentFormState['adapterServing'])}
        >
          <option value="own">each on a server of its own</option>
          <option value="swapped">swapped per request on one server</option>
          <option value="both">both ways, to see what swapping costs</option>
        </select>
      </label>
      <small>Each adapter runs against the base model, and is checked against the model before anything starts.</small>
    </>
  );
}

export const ADAPTER_FORM: ExperimentKindForm<'adapter'> = {
  Subject: AdapterSubject,
  Design: FixedDesignField,
  constraints: 'gates',
  specFields: (form) => ({
    adapters: list(form.adapters).map(loraAdapterEntry),
    ...(form.adapterServing === 'own' ? {} : { serving: form.adapterServing }),
    ...(form.fixedDesign ? { fixed: true } : {}),
  }),
};

/** A KL divergence in nats: tiny values in exponent form, so an adapter's small effect does not read as none. */
const kldText = (kld: number | null | undefined) => (kld == null ? '—' : kld !== 0 && kld < 0.001 ? kld.toExponential(2) : kld.toFixed(4));

/** What an adapter experiment found per condition: the adapter's memory, load time, and how far it moves the answers. */
export function AdapterResult({ result }: { result: ExperimentResult }) {
  return (
    <TableScroll>
      <table data-testid="adapter-table">
        <thead>
          <tr>
            <th>Condition</th>
            <th>Adapter</th>
            <th>Adapter memory</th>
            <th>Load</th>
            <th>Token agreement</th>
            <th>KLD</th>
            <th>Accepted</th>
          </tr>
        </thead>
        <tbody>
          {result.conditions.map((condition) => (
            <tr key={condition.name}>
              <td>{condition.name}</td>
              <td>
                {condition.lora
                  ? `${condition.lora.file} × ${condition.lora.scale}${condition.lora.swapped ? ', swapped' : ''}`
                  : 'none (base model)'}
              </td>
              <td>
                {condition.lora_mib == null ? '—' : `${condition.lora_mib.toFixed(2)} MiB${condition.lora?.swapped ? ' (all loaded)' : ''}`}
              </td>
              <td>{condition.server_load_ms == null ? '—' : `${condition.server_load_ms.toFixed(0)} ms`}</td>
              <td title={condition.token_agreement?.error ?? undefined}>{pct(condition.token_agreement?.mean ?? null)}</td>
              <td title={condition.kld_error ?? undefined}>{kldText(condition.kld_mean)}</td>
              <td>
                {condition.acceptance && condition.acceptance.judged > 0
                  ? `${condition.acceptance.accepted}/${condition.acceptance.judged}`
                  : '—'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
