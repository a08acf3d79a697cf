const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Text made safe to place inside HTML: for the self-contained reports, and for chart tooltips,
 * whose formatter strings ECharts writes into innerHTML. Names there (model, workload, build
 * label) come from runs, and an imported run chooses every one of them.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}
