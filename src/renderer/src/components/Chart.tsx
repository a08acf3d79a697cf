import { useEffect, useRef } from 'react';
import { LineChart, ScatterChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, TitleComponent, ToolboxComponent, TooltipComponent } from 'echarts/components';
import { init, use, type EChartsCoreOption, type EChartsType } from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';

use([LineChart, ScatterChart, GridComponent, TooltipComponent, LegendComponent, DataZoomComponent, ToolboxComponent, TitleComponent, MarkLineComponent, CanvasRenderer]);

/** An ECharts chart that follows its option, the theme, and its container's size; exportable as PNG. */
export function Chart({ option, height = 260, label }: { option: EChartsCoreOption; height?: number; label: string }) {
  const element = useRef<HTMLDivElement>(null);
  const chart = useRef<EChartsType | null>(null);
  const dark = document.documentElement.dataset.theme === 'dark';

  useEffect(() => {
    if (!element.current) return;
    chart.current = init(element.current, dark ? 'dark' : undefined);
    const observer = new ResizeObserver(() => chart.current?.resize());
    observer.observe(element.current);
    return () => {
      observer.disconnect();
      chart.current?.dispose();
      chart.current = null;
    };
  }, [dark]);

  useEffect(() => {
    chart.current?.setOption({ backgroundColor: 'transparent', toolbox: { feature: { saveAsImage: { title: 'PNG', name: label.replace(/\W+/g, '-') } } }, ...option }, { notMerge: true, lazyUpdate: true });
  }, [option, dark, label]);

  return <div ref={element} role="img" aria-label={label} style={{ width: '100%', height }} />;
}
