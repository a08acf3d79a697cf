import type { LogExplanation } from './contract/server';
import { offloadLine } from './gpu-offload';

const mib = (value: number) => `${value >= 10 ? value.toFixed(0) : value.toFixed(2)} MiB`;

/**
 * `server explain`'s facts as (name, value) rows, for the CLI's table and the Server view's.
 * `usedMark` says how each face marks a device as used or unused.
 */
export function logExplanationRows(explanation: LogExplanation, usedMark: (used: boolean | null) => string): [string, string][] {
  const { context } = explanation;
  const joined = (parts: (string | null)[], separator: string) => parts.filter(Boolean).join(separator) || '—';
  return [
    ['build', explanation.build ?? '— (not in the log)'],
    ['backend', explanation.backend ?? '— (no device or buffer line)'],
    [
      'devices',
      explanation.devices.length === 0
        ? '— (no device lines)'
        : explanation.devices
            .map((device) => `${device.id} ${device.name}${device.integrated ? ' (integrated)' : ''}${usedMark(device.used)}`)
            .join('; '),
    ],
    ['offload', offloadLine(explanation.offload)?.replace(/^offload: /, '') ?? '—'],
    [
      'KV cache',
      joined(
        [
          Object.entries(explanation.kvMib)
            .map(([device, size]) => `${device} ${mib(size)}`)
            .join(', ') || null,
          explanation.kvTypes ? `K ${explanation.kvTypes.k}, V ${explanation.kvTypes.v}` : null,
        ],
        '; ',
      ),
    ],
    [
      'context',
      joined(
        [
          context.size === null ? null : `${context.size} tokens`,
          context.perSequence === null ? null : `${context.perSequence} per sequence`,
          context.trained === null ? null : `trained on ${context.trained}`,
        ],
        ', ',
      ),
    ],
    ['flash attention', explanation.flashAttention ?? '—'],
    ['slots', explanation.slots === null ? '—' : String(explanation.slots)],
    ['listening', explanation.listeningOn ?? '— (no ready line)'],
  ];
}
