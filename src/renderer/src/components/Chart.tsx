import { lazy, Suspense, type ComponentProps } from 'react';

// ECharts is most of the UI's JavaScript: it loads with the first chart a view draws, not with the app.
const EChart = lazy(() => import('./EChart').then((module) => ({ default: module.EChart })));

/** A chart (see EChart), with its place held at its height while the chart code loads. */
export function Chart(props: ComponentProps<typeof EChart>) {
  return (
    <Suspense fallback={<div style={{ height: props.height ?? 260 }} aria-busy="true" />}>
      <EChart {...props} />
    </Suspense>
  );
}
