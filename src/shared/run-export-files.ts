import type { RunExport } from './contract';

/** A run's export as named files: what `inferlab export` writes to a folder and the UI puts in one archive. */
export function runExportFiles(rendered: RunExport): { name: string; content: string }[] {
  return [
    { name: 'manifest.json', content: rendered.manifest },
    { name: 'summary.json', content: rendered.summary },
    { name: 'requests.jsonl', content: rendered.requestsJsonl },
    { name: 'requests.csv', content: rendered.requestsCsv },
    { name: 'telemetry.json', content: rendered.telemetry },
    { name: 'telemetry.csv', content: rendered.telemetryCsv },
    ...(rendered.traceJsonl === null ? [] : [{ name: 'trace.jsonl', content: rendered.traceJsonl }]),
  ];
}
