import { Suspense, type ComponentProps } from 'react';
import { preloadable } from './preloadable';
import type { EChart as EChartComponent } from './EChart';

// ECharts is most of the UI's JavaScript: it loads after the first paint (or with the first chart a view draws), not with the app.
const echart = preloadable(() => import('./EChart').then((module) => module.EChart));

/** Fetches the chart code ahead of the first chart. */
export const preloadCharts = echart.preload;

/** A chart (see EChart), with its place held at its height while the chart code loads. */
export function Chart(props: ComponentProps<typeof EChartComponent>) {
  return (
    <Suspense fallback={<div style={{ height: props.height ?? 260 }} aria-busy="true" />}>
      <echart.View {...props} />
    </Suspense>
  );
}
