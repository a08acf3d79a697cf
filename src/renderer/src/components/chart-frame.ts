/**
 * What every chart of the app shares: no animation (a chart redrawn on each tick would never
 * settle), a 13 px title, a tooltip, the grid it asks for, and the legend below the plot: at the
 * top it ran into the title. A chart of many runs lets its legend scroll.
 */
export function chartFrame(title: string, layout: { tooltip: 'axis' | 'item'; grid: Record<string, number>; scrollLegend?: boolean }) {
  return {
    animation: false,
    title: { text: title, textStyle: { fontSize: 13 } },
    legend: layout.scrollLegend ? { bottom: 0, type: 'scroll' } : { bottom: 0 },
    tooltip: { trigger: layout.tooltip },
    grid: layout.grid,
  };
}
