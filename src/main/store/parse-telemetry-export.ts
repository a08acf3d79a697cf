import { Worker } from 'node:worker_threads';

/** One series as the store keeps it: times and values interleaved, NaN where no sampler read a value. */
export interface ParsedTelemetrySeries {
  series: string;
  unit: string;
  points: Float64Array;
}

export type TelemetryParse =
  | { ok: false; invalidJson: string }
  | {
      ok: true;
      /** The document with every series' points taken out, for the schema check of the rest. */
      document: unknown;
      /** Per series, in order; null where the series' points were not a list (the schema check names it). */
      points: (Float64Array | null)[];
      /** The first point that is not [time, value], named as the schema check would. */
      pointProblem: { field: string; message: string } | null;
    };

/**
 * Runs in a worker: JSON.parse of an exported telemetry.json (up to 256 MiB, tens of millions
 * of points) holds whatever thread runs it for seconds, and on the service's own thread that
 * would stall every other call. The points come back as transferred Float64Arrays, so handing
 * them over costs nothing; the small rest comes back for the schema check.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let document;
try {
  document = JSON.parse(new TextDecoder().decode(workerData));
} catch (error) {
  parentPort.postMessage({ ok: false, invalidJson: error.message });
  return;
}
const points = [];
let pointProblem = null;
const series = document !== null && typeof document === 'object' && Array.isArray(document.series) ? document.series : [];
series.forEach((entry, s) => {
  if (entry === null || typeof entry !== 'object' || !Array.isArray(entry.points)) {
    points.push(null);
    return;
  }
  const list = entry.points;
  const flat = new Float64Array(list.length * 2);
  for (let p = 0; p < list.length && pointProblem === null; p++) {
    const point = list[p];
    const field = 'series[' + s + '].points[' + p + ']';
    if (!Array.isArray(point)) pointProblem = { field, message: 'must be array' };
    else if (point.length !== 2) pointProblem = { field, message: 'must be [time, value]: it has ' + point.length + ' items' };
    else if (typeof point[0] !== 'number') pointProblem = { field: field + '[0]', message: 'must be number' };
    else if (point[1] !== null && typeof point[1] !== 'number') pointProblem = { field: field + '[1]', message: 'must be number or null' };
    else {
      flat[2 * p] = point[0];
      flat[2 * p + 1] = point[1] === null ? NaN : point[1];
    }
  }
  points.push(flat);
  entry.points = [];
});
parentPort.postMessage(
  { ok: true, document, points, pointProblem },
  points.filter((flat) => flat !== null).map((flat) => flat.buffer),
);
`;

/**
 * Parses telemetry.json on a worker thread; the service keeps answering while it runs. The
 * bytes are handed over, not copied, when they own their memory.
 */
export function parseTelemetryExport(bytes: Uint8Array): Promise<TelemetryParse> {
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
  return new Promise((resolve, reject) => {
    const worker = new Worker(`(() => {${WORKER_SOURCE}})()`, {
      eval: true,
      workerData: owned,
      transferList: [owned.buffer as ArrayBuffer],
    });
    let settled = false;
    worker.once('message', (result: TelemetryParse) => {
      settled = true;
      resolve(result);
      void worker.terminate();
    });
    worker.once('error', (error) => {
      settled = true;
      reject(error);
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`the telemetry parser stopped (exit ${code}) before it answered`));
    });
  });
}
