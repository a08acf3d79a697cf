import type { GpuSample, ProcessVramSample } from '../../shared/contract/telemetry';

/** The one query Infer Lab runs, so the parser knows the column order. */
export const GPU_QUERY_FIELDS = [
  'timestamp',
  'index',
  'uuid',
  'name',
  'memory.used',
  'memory.total',
  'utilization.gpu',
  'utilization.memory',
  'temperature.gpu',
  'power.draw',
  'clocks.sm',
  'pstate',
  'clocks.mem',
  // The bitmask under its older name: drivers that renamed it to clocks_event_reasons.active still accept this one.
  'clocks_throttle_reasons.active',
] as const;

/** Recordings made before clocks.mem and the throttle reasons were queried end at pstate. */
const GPU_QUERY_FIELDS_BEFORE_CLOCKS = 12;

/**
 * The query; `withClocks: false` leaves out the two newest fields, for a driver that
 * refuses one of them (the rest of the line keeps its order, and the parser reads both forms).
 */
export function gpuQueryArgs(intervalMs: number, withClocks = true): string[] {
  return [...gpuQueryOnceArgs(withClocks), `-lms`, String(intervalMs)];
}

/** The same query answered once. */
export function gpuQueryOnceArgs(withClocks = true): string[] {
  const fields = withClocks ? GPU_QUERY_FIELDS : GPU_QUERY_FIELDS.slice(0, GPU_QUERY_FIELDS_BEFORE_CLOCKS);
  return [`--query-gpu=${fields.join(',')}`, '--format=csv,noheader,nounits'];
}

/** nvidia-smi's answer to a field its driver does not know: `Field "x" is not a valid field to query.` */
export const INVALID_QUERY_FIELD = /is not a valid field to query/i;

/** Per-process VRAM, with the GPU each line is on (a process split across GPUs has one line per GPU). */
export const COMPUTE_APP_FIELDS = ['timestamp', 'gpu_uuid', 'pid', 'process_name', 'used_memory'] as const;

export function computeAppsQueryArgs(intervalMs: number): string[] {
  return [`--query-compute-apps=${COMPUTE_APP_FIELDS.join(',')}`, '--format=csv,noheader,nounits', '-lms', String(intervalMs)];
}

/** One reading of used memory on every GPU, for the moment before a server is spawned. */
export function usedMemoryOnceArgs(): string[] {
  return ['--query-gpu=index,memory.used', '--format=csv,noheader,nounits'];
}

/**
 * nvidia-smi's `timestamp` field, "YYYY/MM/DD HH:MM:SS.mmm" in its local time, as epoch
 * ms; null for anything else.
 */
export function parseSmiTimestamp(raw: string | undefined): number | null {
  const match = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(raw?.trim() ?? '');
  if (!match) return null;
  const [, year, month, day, hour, minute, second, fraction = '0'] = match;
  const epoch = new Date(
    Number(year),
    Number(month) - 1,
    Number(day),
    Number(hour),
    Number(minute),
    Number(second),
    Number(fraction.padEnd(3, '0')),
  ).getTime();
  return Number.isFinite(epoch) ? epoch : null;
}

/** Driver-level failures that restarting nvidia-smi will not fix. */
export const NVML_FAILURE =
  /Failed to initialize NVML|NVIDIA-SMI has failed|couldn't communicate with the NVIDIA driver|No devices were found/i;

function numberOrNull(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const text = raw.trim();
  // "[N/A]", "[Not Supported]", "[Unknown Error]", "N/A" all mean: not measured.
  if (text === '' || text.startsWith('[') || text === 'N/A') return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

function textOrNull(raw: string | undefined): string | null {
  const text = raw?.trim();
  return !text || text.startsWith('[') || text === 'N/A' ? null : text;
}

/** Parses one `--query-gpu` line; null for anything that is not a data line. */
export function parseGpuLine(line: string, t: number): GpuSample | null {
  const fields = line.split(',').map((field) => field.trim());
  if (fields.length !== GPU_QUERY_FIELDS.length && fields.length !== GPU_QUERY_FIELDS_BEFORE_CLOCKS) return null;
  const index = numberOrNull(fields[1]);
  if (index === null) return null;
  return {
    t,
    index,
    uuid: textOrNull(fields[2]),
    name: textOrNull(fields[3]),
    memoryUsedMib: numberOrNull(fields[4]),
    memoryTotalMib: numberOrNull(fields[5]),
    utilizationPct: numberOrNull(fields[6]),
    memoryUtilizationPct: numberOrNull(fields[7]),
    temperatureC: numberOrNull(fields[8]),
    powerW: numberOrNull(fields[9]),
    smClockMhz: numberOrNull(fields[10]),
    pstate: textOrNull(fields[11]),
    memClockMhz: numberOrNull(fields[12]),
    throttleReasons: bitmaskOrNull(fields[13]),
  };
}

/** nvidia-smi prints the reasons bitmask as hex ("0x0000000000000004"). */
function bitmaskOrNull(raw: string | undefined): number | null {
  const text = raw?.trim() ?? '';
  if (!/^0x[0-9a-f]{1,16}$/i.test(text)) return numberOrNull(raw);
  // Every defined reason sits in the low 32 bits; the rest would lose precision as a number.
  return Number(BigInt(text) & 0xffffffffn);
}

/**
 * Parses one `--query-compute-apps` line: the full COMPUTE_APP_FIELDS form (a process
 * name may itself hold commas) or the bare `pid,used_memory` form.
 */
export function parseComputeAppLine(line: string, t: number): ProcessVramSample | null {
  const fields = line.split(',').map((field) => field.trim());
  if (fields.length === 2) {
    const pid = numberOrNull(fields[0]);
    if (pid === null) return null;
    return { t, pid, usedMib: numberOrNull(fields[1]) };
  }
  if (fields.length < COMPUTE_APP_FIELDS.length) return null;
  const pid = numberOrNull(fields[2]);
  if (pid === null) return null;
  return {
    t,
    pid,
    usedMib: numberOrNull(fields[fields.length - 1]),
    gpuUuid: textOrNull(fields[1]),
    name: textOrNull(fields.slice(3, -1).join(',')),
  };
}

/** The timestamp field of a query line (the first column of both queries). */
export function lineTimestamp(line: string): number | null {
  return parseSmiTimestamp(line.split(',')[0]);
}
