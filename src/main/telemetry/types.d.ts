declare module 'parse-prometheus-text-format' {
  interface PrometheusMetric {
    value?: string;
    labels?: Record<string, string>;
    buckets?: Record<string, string>;
    quantiles?: Record<string, string>;
    count?: string;
    sum?: string;
    /** The sample's own time (ms since the epoch), where the exposition gives one after the value. */
    timestamp_ms?: string;
  }
  interface PrometheusFamily {
    name: string;
    help: string;
    type: string;
    metrics: PrometheusMetric[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
