import { useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { ModelPlan, ModelPlanRequest, PlannedCandidate } from '../../../shared/contract/models';
import { projectorEncodes } from '../../../shared/projector-encodes';
import { ErrorBox } from '../components/ErrorBox';
import { bytes } from '../components/format';
import { TableScroll } from '../components/TableScroll';
import { useAction } from '../hooks/use-action';
import { HubSearch } from './HubSearch';
import { PullProgressCard, type StartedPull } from './ModelPull';

const isHubSource = (source: string) => source.startsWith('hf:');

const FIT_TEXT: Record<string, string> = { fits: 'fits', partial: 'partial', cpu: 'CPU only', no: 'does not fit' };

function fitText(candidate: PlannedCandidate): string {
  const adapter = candidate.adapter;
  if (adapter)
    return `LoRA adapter, rank ${adapter.rank}${adapter.base ? (adapter.base.fits ? `: fits ${adapter.base.model}` : `: does not fit ${adapter.base.model}`) : ''}`;
  const projector = candidate.projector;
  if (projector) return `projector for ${projectorEncodes(projector)}: serve it as the profile's projector`;
  if (!candidate.fit) return 'unreadable';
  const layers =
    candidate.fit.verdict === 'fits' || candidate.fit.verdict === 'partial'
      ? ` (${candidate.fit.layersOnGpu}/${candidate.fit.layersTotal} layers)`
      : '';
  return `${FIT_TEXT[candidate.fit.verdict]}${layers}`;
}

function fitClass(candidate: PlannedCandidate): string | undefined {
  if (candidate.adapter) return candidate.adapter.base ? (candidate.adapter.base.fits ? 'ok' : 'error') : undefined;
  if (candidate.projector) return undefined;
  return candidate.fit?.verdict === 'fits' ? 'ok' : candidate.fit?.verdict === 'no' || !candidate.fit ? 'error' : undefined;
}

/** Rows picked to pull, by label; null where the plan is of local files, which have nothing to pull. */
interface PullChoice {
  picked: ReadonlySet<string>;
  toggle: (label: string) => void;
}

function PlanTable({ plan, choice }: { plan: ModelPlan; choice: PullChoice | null }) {
  return (
    <>
      <ul aria-label="memory pools">
        {plan.devices.map((device) => (
          <li key={device.name}>
            {device.name}: {bytes(device.freeBytes)} {device.kind === 'gpu' ? 'free' : 'available'} of {bytes(device.totalBytes)};{' '}
            {device.bandwidthGbPerS === null ? 'bandwidth unknown' : `${device.bandwidthGbPerS.toFixed(0)} GB/s`} ({device.bandwidthSource})
          </li>
        ))}
        {!plan.devices.some((device) => device.kind === 'gpu') && <li>no GPU: {plan.gpuSource}</li>}
      </ul>
      <TableScroll>
        <table aria-label="model plan">
          <thead>
            <tr>
              {choice && <th>pull</th>}
              <th>quant</th>
              <th>size</th>
              <th>KV cache</th>
              <th>compute</th>
              <th>needs</th>
              <th>fit</th>
              <th>largest context that fits</th>
              <th>ceiling tok/s</th>
              <th>measured tok/s</th>
            </tr>
          </thead>
          <tbody>
            {plan.candidates.map((candidate) => (
              <tr
                key={candidate.files[0]}
                title={[candidate.fit?.detail, candidate.problem, ...(candidate.memory?.notes ?? []), candidate.ceilingReason]
                  .filter(Boolean)
                  .join('\n')}
              >
                {choice && (
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`pull ${candidate.label}`}
                      checked={choice.picked.has(candidate.label)}
                      disabled={Boolean(candidate.problem)}
                      onChange={() => choice.toggle(candidate.label)}
                    />
                  </td>
                )}
                <td>{candidate.label}</td>
                <td>{bytes(candidate.sizeBytes)}</td>
                <td>{candidate.memory ? bytes(candidate.memory.kvBytes) : '—'}</td>
                <td>{candidate.memory ? bytes(candidate.memory.computeBytes) : '—'}</td>
                <td>{candidate.fit ? bytes(candidate.fit.gpuBytes > 0 ? candidate.fit.gpuBytes : candidate.fit.hostBytes) : '—'}</td>
                <td className={fitClass(candidate)} title={candidate.adapter?.base?.problem ?? undefined}>
                  {fitText(candidate)}
                </td>
                <td>{candidate.fit?.largestFullContext?.toLocaleString('en-US') ?? '—'}</td>
                <td>{candidate.ceiling ? candidate.ceiling.tokensPerS.toFixed(0) : '—'}</td>
                <td title={candidate.measured ? `run ${candidate.measured.runId}, ${candidate.measured.startedAt}` : undefined}>
                  {candidate.measured
                    ? `${candidate.measured.tokensPerS.toFixed(0)}${candidate.measured.ofCeiling === null ? '' : ` (${Math.round(candidate.measured.ofCeiling * 100)} %)`}`
                    : '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {plan.candidates.some((candidate) => candidate.problem) && (
        <ul aria-label="plan problems">
          {plan.candidates
            .filter((candidate) => candidate.problem)
            .map((candidate) => (
              <li key={candidate.files[0]} className="error">
                {candidate.label}: {candidate.problem}
              </li>
            ))}
        </ul>
      )}
      <p className="empty">
        Needs: on the GPUs for “fits” and “partial”, in RAM for “CPU only”; each GPU also keeps 512 MiB for the runtime, and the compute
        buffer is an estimate (docs/METRICS.md, “Model plan”). Ceiling: one sequence at an empty context, memory bandwidth ÷ the weights a
        decode step reads; a measured run lands below it.
      </p>
    </>
  );
}

/**
 * What fits before downloading: a hub repository's GGUF headers are read by range on the
 * machine the service runs on (the GPU box, for `inferlab serve`), and fitted to its GPUs.
 */
export function ModelPlanPanel({ client }: { client: AppServices }) {
  const [source, setSource] = useState('');
  const [quants, setQuants] = useState('');
  const [context, setContext] = useState('4096');
  const [parallel, setParallel] = useState('1');
  const [kvType, setKvType] = useState<NonNullable<ModelPlanRequest['kvType']>>('f16');
  /** The base model the plan's LoRA adapters are checked against (`--for`); empty for none. */
  const [adapterFor, setAdapterFor] = useState('');
  const [plan, setPlan] = useState<ModelPlan | null>(null);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const [pull, setPull] = useState<StartedPull | null>(null);
  const { error, busy, run } = useAction();
  const pulling = useAction();
  const submit = async (from = source) => {
    setPlan(null);
    setPicked(new Set());
    const request: ModelPlanRequest = {
      source: from.trim(),
      quants: quants
        .split(',')
        .map((quant) => quant.trim())
        .filter(Boolean),
      contextPerSlot: Number(context),
      parallel: Number(parallel),
      kvType,
      ...(adapterFor.trim() ? { adapterFor: adapterFor.trim() } : {}),
    };
    await run(() => client.models.plan(request), setPlan);
  };
  const hubPlan = plan !== null && isHubSource(plan.source);
  const choice: PullChoice | null = hubPlan
    ? {
        picked,
        toggle: (label) =>
          setPicked((current) => {
            const next = new Set(current);
            if (!next.delete(label)) next.add(label);
            return next;
          }),
      }
    : null;
  const pickedBytes =
    plan?.candidates.filter((candidate) => picked.has(candidate.label)).reduce((sum, candidate) => sum + candidate.sizeBytes, 0) ?? 0;
  const startPull = async () => {
    if (!plan) return;
    const labels = plan.candidates.filter((candidate) => picked.has(candidate.label)).map((candidate) => candidate.label);
    await pulling.run(
      () => client.models.pull({ source: plan.source, quants: labels }),
      ({ jobId }) => setPull({ source: plan.source, labels, jobId }),
    );
  };
  return (
    <section aria-labelledby="plan-title" className="card">
      <h2 id="plan-title">Get models: what fits before downloading</h2>
      <HubSearch
        client={client}
        onPick={(repository) => {
          setSource(repository);
          void submit(repository);
        }}
      />
      <form
        className="toolbar wrap"
        aria-label="plan models"
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <label>
          Repository or folder{' '}
          <input
            value={source}
            onChange={(event) => setSource(event.target.value)}
            placeholder="hf:Qwen/Qwen3-8B-GGUF"
            size={34}
            required
          />
        </label>
        <label>
          Quantizations{' '}
          <input value={quants} onChange={(event) => setQuants(event.target.value)} placeholder="all (or Q4_K_M,Q8_0)" size={18} />
        </label>
        <label>
          Context per slot <input type="number" min={256} step={256} value={context} onChange={(event) => setContext(event.target.value)} />
        </label>
        <label>
          Slots <input type="number" min={1} max={256} value={parallel} onChange={(event) => setParallel(event.target.value)} />
        </label>
        <label>
          KV cache{' '}
          <select aria-label="KV cache type" value={kvType} onChange={(event) => setKvType(event.target.value as typeof kvType)}>
            <option value="f16">f16</option>
            <option value="q8_0">q8_0</option>
            <option value="q4_0">q4_0</option>
          </select>
        </label>
        <label title="Each LoRA adapter in the plan is checked against this model: its architecture and every tensor's shape">
          Adapters for{' '}
          <input value={adapterFor} onChange={(event) => setAdapterFor(event.target.value)} placeholder="a base model" size={14} />
        </label>
        <button type="submit" disabled={busy || !source.trim()}>
          {busy ? 'Reading headers…' : 'Plan'}
        </button>
      </form>
      <ErrorBox error={error} />
      {plan?.problems.map((problem) => (
        <p key={problem} className="error">
          {problem}
        </p>
      ))}
      {plan && <PlanTable plan={plan} choice={choice} />}
      {hubPlan && (
        <div className="toolbar">
          <button type="button" disabled={picked.size === 0 || pulling.busy} onClick={() => void startPull()}>
            {picked.size === 0 ? 'Pick quantizations to pull' : `Pull ${picked.size} (${bytes(pickedBytes)})`}
          </button>
          <small>into the Hugging Face cache on the machine Infer Lab runs on, each file checked against the hub’s SHA-256</small>
        </div>
      )}
      <ErrorBox error={pulling.error} />
      {pull && <PullProgressCard client={client} pull={pull} />}
    </section>
  );
}
