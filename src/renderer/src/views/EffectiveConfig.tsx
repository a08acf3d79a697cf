import type { ServerSnapshot } from '../../../shared/contract/server';
import { ms } from '../components/format';

/** What the running server reports it actually runs: build, context, slots, offload, buffers and its cold start. */
export function EffectiveConfig({ current }: { current: ServerSnapshot | null }) {
  return (
    <>
      <h2>Effective configuration</h2>
      {current?.effectiveConfig ? (
        <table>
          <tbody>
            <tr>
              <th>Build</th>
              <td>{current.effectiveConfig.build ?? '—'}</td>
            </tr>
            <tr>
              <th>Model type</th>
              <td>{current.effectiveConfig.modelFileType ?? '—'}</td>
            </tr>
            <tr>
              <th>Context total / per slot</th>
              <td>
                {current.effectiveConfig.contextSize ?? '—'} / {current.effectiveConfig.contextPerSlot ?? '—'} tokens
              </td>
            </tr>
            <tr>
              <th>Slots</th>
              <td>{current.effectiveConfig.slots ?? '—'}</td>
            </tr>
            <tr>
              <th>Layers on GPU</th>
              <td>
                {current.effectiveConfig.layersOffloaded
                  ? `${current.effectiveConfig.layersOffloaded.offloaded} / ${current.effectiveConfig.layersOffloaded.total}`
                  : 'none reported (CPU)'}
              </td>
            </tr>
            {Object.entries(current.effectiveConfig.buffersMib).map(([name, size]) => (
              <tr key={name}>
                <th>{name} buffer</th>
                <td>{size.toFixed(2)} MiB</td>
              </tr>
            ))}
            <tr>
              <th>Cold start: spawn → ready</th>
              <td>{ms(current.coldStart?.spawnToReadyMs)}</td>
            </tr>
            <tr>
              <th>Cold start: spawn → first token</th>
              <td>{ms(current.coldStart?.spawnToFirstTokenMs)}</td>
            </tr>
          </tbody>
        </table>
      ) : (
        <p className="empty">Start a server to see what actually runs: the context, slots and buffers it reports.</p>
      )}
    </>
  );
}
