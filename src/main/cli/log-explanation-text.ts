import type { LogExplanation } from '../../shared/contract/server';
import { logExplanationRows } from '../../shared/log-explanation-rows';
import { formatTable } from './format';

/** `server explain` for a terminal: the facts as a two-column table, then the warnings and any failure. */
export function logExplanationText(explanation: LogExplanation, source: string): string {
  const rows = logExplanationRows(explanation, (used) => (used === true ? ' [used]' : used === false ? ' [unused]' : ''));
  const lines = [`${source}: ${explanation.lines} lines`, formatTable(rows)];
  if (explanation.fault) lines.push(`FAILED (${explanation.fault.code}): ${explanation.fault.hint}`);
  lines.push(
    explanation.warnings.length === 0
      ? 'warnings: none'
      : ['warnings:', ...explanation.warnings.map((warning) => `  ${warning}`)].join('\n'),
  );
  return `${lines.join('\n')}\n`;
}
