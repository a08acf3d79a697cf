import { useEffect, useRef } from 'react';
import { CustomChart, LineChart, ScatterChart } from 'echarts/charts';
import { DataZoomComponent, GridComponent, LegendComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { init, use, type EChartsCoreOption, type EChartsType } from 'echarts/core';
import { CanvasRenderer, SVGRenderer } from 'echarts/renderers';
import { useAppStore } from '../state/store';

use([
  CustomChart,
  LineChart,
  ScatterChart,
  GridComponent,
  TooltipComponent,
  LegendComponent,
  DataZoomComponent,
  TitleComponent,
  MarkLineComponent,
  CanvasRenderer,
  SVGRenderer,
]);

/** Renders the same option once more with the SVG renderer and downloads it as a file. */
function downloadSvg(option: EChartsCoreOption, width: number, height: number, name: string, dark: boolean): void {
  const offscreen = init(null, dark ? 'dark' : undefined, { renderer: 'svg', ssr: true, width, height });
  offscreen.setOption({ ...option, animation: false });
  const svg = offscreen.renderToSVGString();
  offscreen.dispose();
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  download(url, `${name}.svg`);
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function download(href: string, fileName: string): void {
  const link = document.createElement('a');
  link.href = href;
  link.download = fileName;
  link.click();
}

/** An ECharts chart that follows its option, the theme, and its container's size; exportable as PNG and SVG. */
export function EChart({ option, height = 260, label }: { option: EChartsCoreOption; height?: number; label: string }) {
  const element = useRef<HTMLDivElement>(null);
  const chart = useRef<EChartsType | null>(null);
  // From the store, not the document: the document's theme attribute is set by an effect that runs after this render.
  const dark = useAppStore((state) => state.theme) === 'dark';

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
    chart.current?.setOption({ backgroundColor: 'transparent', ...option }, { notMerge: true, lazyUpdate: true });
  }, [option, dark]);

  const name = label.replace(/\W+/g, '-');
  return (
    <figure className="chart" data-chart-theme={dark ? 'dark' : 'light'}>
      <div ref={element} role="img" aria-label={label} style={{ width: '100%', height }} />
      <figcaption className="chart-export">
        <button
          type="button"
          aria-label={`${label} as PNG`}
          onClick={() =>
            chart.current &&
            download(chart.current.getDataURL({ type: 'png', pixelRatio: 2, backgroundColor: dark ? '#0d1117' : '#ffffff' }), `${name}.png`)
          }
        >
          PNG
        </button>
        <button
          type="button"
          aria-label={`${label} as SVG`}
          onClick={() => downloadSvg(option, element.current?.clientWidth ?? 800, height, name, dark)}
        >
          SVG
        </button>
      </figcaption>
    </figure>
  );
}
