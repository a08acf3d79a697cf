import type { LogExplanation } from '../../shared/contract/server';
import { logExplanationRows } from '../../shared/log-explanation-rows';
import { formatTable } from './format';

/** A heading and its items one to a line, or the heading with "none". */
function section(heading: string, items: readonly string[]): string {
  return items.length === 0 ? `${heading}: none` : [`${heading}:`, ...items.map((item) => `  ${item}`)].join('\n');
}

/**
 * `server explain` for a terminal: the facts as a two-column table, then any failure, the warnings,
 * and what the text does not say (a pasted tail or head leaves some facts unknown).
 */
export function logExplanationText(explanation: LogExplanation, source: string): string {
  const rows = logExplanationRows(explanation, (used) => (used === true ? ' [used]' : used === false ? ' [unused]' : ''));
  const lines = [`${source}: ${explanation.lines} lines, ${explanation.llamaLines} of them llama.cpp's`, formatTable(rows)];
  if (explanation.fault) lines.push(`FAILED (${explanation.fault.code}): ${explanation.fault.hint}`);
  lines.push(section('warnings', explanation.warnings), section('missing', explanation.missing));
  return `${lines.join('\n')}\n`;
}

/**
 * Why a text cannot be explained, naming where it came from; null when it holds at least one line
 * llama.cpp prints. Any part of a log is worth reading; a text with none of its lines is not a log.
 */
export function explainRefusal(explanation: Pick<LogExplanation, 'llamaLines'>, source: string): string | null {
  if (explanation.llamaLines > 0) return null;
  return `${source}: no llama.cpp startup lines found (not one line llama.cpp prints: no build, device, buffer, layer, slot or listening line); give the log llama-server printed while it started, or any part of it`;
}
