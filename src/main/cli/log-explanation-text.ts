import type { LogExplanation } from '../../shared/contract/server';
import { offloadLine } from '../../shared/gpu-offload';
import { formatTable } from './format';

const mib = (value: number) => `${value >= 10 ? value.toFixed(0) : value.toFixed(2)} MiB`;

/** `server explain` for a terminal: the facts as a two-column table, then the warnings and any failure. */
export function logExplanationText(explanation: LogExplanation, source: string): string {
  const { context } = explanation;
  const rows: [string, string][] = [
    ['build', explanation.build ?? '— (not in the log)'],
    ['backend', explanation.backend ?? '— (no device or buffer line)'],
    [
      'devices',
      explanation.devices.length === 0
        ? '— (no device lines)'
        : explanation.devices
            .map(
              (device) =>
                `${device.id} ${device.name}${device.integrated ? ' (integrated)' : ''}${device.used === true ? ' [used]' : device.used === false ? ' [unused]' : ''}`,
            )
            .join('; '),
    ],
    ['offload', offloadLine(explanation.offload)?.replace(/^offload: /, '') ?? '—'],
    [
      'KV cache',
      [
        Object.entries(explanation.kvMib)
          .map(([device, size]) => `${device} ${mib(size)}`)
          .join(', ') || null,
        explanation.kvTypes ? `K ${explanation.kvTypes.k}, V ${explanation.kvTypes.v}` : null,
      ]
        .filter(Boolean)
        .join('; ') || '—',
    ],
    [
      'context',
      [
        context.size === null ? null : `${context.size} tokens`,
        context.perSequence === null ? null : `${context.perSequence} per sequence`,
        context.trained === null ? null : `trained on ${context.trained}`,
      ]
        .filter(Boolean)
        .join(', ') || '—',
    ],
    ['flash attention', explanation.flashAttention ?? '—'],
    ['slots', explanation.slots === null ? '—' : String(explanation.slots)],
  ];
  const lines = [`${source}: ${explanation.lines} lines`, formatTable(rows)];
  if (explanation.fault) lines.push(`FAILED (${explanation.fault.code}): ${explanation.fault.hint}`);
  lines.push(
    explanation.warnings.length === 0
      ? 'warnings: none'
      : ['warnings:', ...explanation.warnings.map((warning) => `  ${warning}`)].join('\n'),
  );
  return `${lines.join('\n')}\n`;
}
