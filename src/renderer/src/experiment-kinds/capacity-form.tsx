import { NumberField } from '../components/NumberField';
import type { ExperimentKindForm, KindFieldProps } from './form-state';
import { number } from './form-state';

function CapacityDesign({ form, set, setForm, text }: KindFieldProps) {
  return (
    <>
      <label>
        Load by{' '}
        <select
          aria-label="capacity by"
          value={form.capacityBy}
          onChange={(event) => {
            const by = event.target.value as 'rate' | 'concurrency' | 'users';
            // Users are conversations: switching to them picks the built-in conversations, and back.
            setForm((current) => ({
              ...current,
              capacityBy: by,
              workload: by === 'users' ? 'multi-turn-chat' : current.workload === 'multi-turn-chat' ? 'chat-short' : current.workload,
            }));
          }}
        >
          <option value="rate">arrival rate (req/s, open loop)</option>
          <option value="concurrency">concurrency (closed loop)</option>
          <option value="users">concurrent users (conversations)</option>
        </select>
      </label>
      <NumberField label="Percentile" min={50} max={99.9} step="any" {...text('percentile', 'capacity percentile')} />
      <NumberField label="First load" min={0} step="any" {...text('startLoad', 'capacity start')} placeholder="1" />
      <NumberField label="Highest load" min={0} step="any" {...text('maxLoad', 'capacity max load')} placeholder="default" />
      <label>
        <input type="checkbox" checked={form.keepCache} onChange={(event) => set('keepCache', event.target.checked)} /> Keep the prompt
        cache between steps (the workload reuses prefixes)
      </label>
    </>
  );
}

export const CAPACITY_FORM: ExperimentKindForm<'capacity'> = {
  Design: CapacityDesign,
  // A capacity look takes what its percentile needs unless asked for more.
  design: {
    repeats: false,
    concurrency: false,
    requestsLabel: 'Requests per look',
    requestsHint: { short: 'auto', meaning: 'Empty: as many requests as the percentile needs for a decision' },
    requestsOptional: true,
  },
  constraints: 'slo',
  specFields: (form) => ({
    capacity: {
      by: form.capacityBy,
      percentile: number(form.percentile) ?? 0,
      start: number(form.startLoad),
      maxLoad: number(form.maxLoad),
      keepCache: form.keepCache,
    },
  }),
};
