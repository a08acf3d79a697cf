import type { GpuSample } from '../../shared/contract/telemetry';
import { parseExposition, type MetricFamilies } from './prometheus-text';

/** One GPU (or MIG instance) in one scrape, keyed so the same device keeps its index across scrapes. */
export interface ExporterGpuReading {
  /** host, GPU index and MIG instance: what tells two series of one scrape apart. */
  key: string;
  host: string | null;
  sample: Omit<GpuSample, 'index' | 'sweep'>;
}

export type GpuExporterKind = 'dcgm-exporter' | 'amd-device-metrics-exporter';

type Field =
  | 'memoryUsedMib'
  | 'memoryFreeMib'
  | 'memoryReservedMib'
  | 'memoryTotalMib'
  | 'utilizationPct'
  | 'engineActive'
  | 'memoryUtilizationPct'
  | 'temperatureC'
  | 'powerW'
  | 'smClockMhz'
  | 'memClockMhz'
  | 'throttleReasons';

/**
 * NVIDIA dcgm-exporter's field names (its default counters CSV); units as DCGM reports them:
 * frame buffer in MiB, power in W, clocks in MHz, utilization in %, GR_ENGINE_ACTIVE a 0–1 ratio.
 */
const DCGM_FIELDS: Record<string, Field> = {
  DCGM_FI_DEV_FB_USED: 'memoryUsedMib',
  DCGM_FI_DEV_FB_FREE: 'memoryFreeMib',
  DCGM_FI_DEV_FB_RESERVED: 'memoryReservedMib',
  DCGM_FI_DEV_GPU_UTIL: 'utilizationPct',
  DCGM_FI_PROF_GR_ENGINE_ACTIVE: 'engineActive',
  DCGM_FI_DEV_MEM_COPY_UTIL: 'memoryUtilizationPct',
  DCGM_FI_DEV_GPU_TEMP: 'temperatureC',
  DCGM_FI_DEV_POWER_USAGE: 'powerW',
  DCGM_FI_DEV_SM_CLOCK: 'smClockMhz',
  DCGM_FI_DEV_MEM_CLOCK: 'memClockMhz',
  // Renamed in DCGM 3.3 with NVML's "clocks event reasons"; the bitmask is the same.
  DCGM_FI_DEV_CLOCK_THROTTLE_REASONS: 'throttleReasons',
  DCGM_FI_DEV_CLOCKS_EVENT_REASONS: 'throttleReasons',
};

/**
 * AMD's device-metrics-exporter (ROCm): VRAM in MB as amd-smi reports it (taken as MiB, as
 * amd-smi's own MB are), power in W, GFX activity in %. Its names take a configurable prefix
 * (`amd_gpu_used_vram` where the prefix is `amd_`), so they are matched by their ending.
 */
const AMD_FIELDS: Record<string, Field> = {
  gpu_used_vram: 'memoryUsedMib',
  gpu_free_vram: 'memoryFreeMib',
  gpu_total_vram: 'memoryTotalMib',
  gpu_gfx_activity: 'utilizationPct',
  gpu_umc_activity: 'memoryUtilizationPct',
  gpu_junction_temperature: 'temperatureC',
  gpu_package_power: 'powerW',
  gpu_average_package_power: 'powerW',
  gpu_power_usage: 'powerW',
};

function amdField(name: string): Field | null {
  for (const [suffix, field] of Object.entries(AMD_FIELDS))
    if (name === suffix || (name.endsWith(`_${suffix}`) && /^[a-z0-9_]*$/i.test(name))) return field;
  return null;
}

const label = (labels: Record<string, string>, ...names: string[]) => {
  for (const name of names) if (labels[name] !== undefined && labels[name] !== '') return labels[name]!;
  return null;
};

/**
 * Only the samples and their TYPE matter here. HELP lines go: dcgm-exporter prints `# HELP NAME`
 * with no text for some fields (captured), which the parser refuses. The parser also drops a
 * last line without its newline.
 */
function families(text: string): MetricFamilies {
  const kept = text
    .split('\n')
    .filter((line) => !line.startsWith('#') || /^# TYPE \S+ \S+\s*$/.test(line))
    .join('\n');
  return parseExposition(`${kept}\n`, 'the GPU exporter');
}

/** What tells one of the exporter's collections from the next, read off one page. */
export interface ExporterPage {
  /** Every GPU series with its value (and timestamp), in a fixed order: equal on two pages only when no GPU figure changed. */
  fingerprint: string;
  /** The page's own sample times (ms since the epoch), where every GPU series carries one; else null. */
  stampMs: { earliest: number; latest: number } | null;
}

const isGpuSeries = (name: string, labels: Record<string, string>) =>
  labels.gpu !== undefined || labels.gpu_id !== undefined || DCGM_FIELDS[name] !== undefined || amdField(name) !== null;

/**
 * Every GPU series counts, read or not: a counter such as DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION moves
 * on each collection even while the figures read here hold still. The exporter's own series (Go
 * runtime, HTTP handler) change on every scrape and name no GPU, so they are left out. Sorted,
 * since dcgm-exporter writes its families in map order.
 */
function pageOf(list: MetricFamilies): ExporterPage {
  const lines: string[] = [];
  let earliest = Number.POSITIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  let unstamped = false;
  for (const family of list)
    for (const metric of family.metrics) {
      const labels = (metric.labels ?? {}) as Record<string, string>;
      if (!isGpuSeries(family.name, labels)) continue;
      const sorted = Object.keys(labels)
        .sort()
        .map((name) => `${name}=${JSON.stringify(labels[name])}`);
      lines.push(`${family.name}{${sorted.join(',')}} ${metric.value ?? JSON.stringify(metric)} ${metric.timestamp_ms ?? ''}`);
      const stamp = Number(metric.timestamp_ms);
      if (metric.timestamp_ms === undefined || !Number.isSafeInteger(stamp)) unstamped = true;
      else [earliest, latest] = [Math.min(earliest, stamp), Math.max(latest, stamp)];
    }
  lines.sort();
  return { fingerprint: lines.join('\n'), stampMs: unstamped || lines.length === 0 ? null : { earliest, latest } };
}

/**
 * The GPUs in one scrape of a GPU metrics exporter, in the order they first appear. Series
 * that differ only by pod labels (a GPU shared by pods) are one GPU; a MIG instance is its own
 * device, named after its profile. Values that are not finite numbers are left null.
 */
export function parseGpuExporterMetrics(
  text: string,
  t: number,
): { kind: GpuExporterKind | null; readings: ExporterGpuReading[]; page: ExporterPage } {
  const byKey = new Map<
    string,
    { host: string | null; physical: string; labels: Record<string, string>; values: Partial<Record<Field, number>> }
  >();
  let kind: GpuExporterKind | null = null;
  const list = families(text);
  for (const family of list) {
    const field = DCGM_FIELDS[family.name] ?? amdField(family.name);
    if (!field) continue;
    kind ??= family.name in DCGM_FIELDS ? 'dcgm-exporter' : 'amd-device-metrics-exporter';
    for (const metric of family.metrics) {
      const labels = (metric.labels ?? {}) as Record<string, string>;
      const value = Number(metric.value);
      const host = label(labels, 'Hostname', 'hostname', 'host');
      const gpu = label(labels, 'gpu', 'gpu_id') ?? '?';
      const instance = label(labels, 'GPU_I_ID', 'gpu_partition_id');
      const key = `${host ?? ''}/${gpu}/${instance ?? ''}`;
      const entry = byKey.get(key) ?? { host, physical: `${host ?? ''}/${gpu}`, labels, values: {} };
      byKey.set(key, entry);
      if (Number.isFinite(value) && entry.values[field] === undefined) entry.values[field] = value;
    }
  }
  // MIG slices of one GPU each repeat the whole GPU's power (captured: three 2g.20gb slices of
  // an A800 at 78.2 W each): it is kept on the first slice only, so sums count the GPU once.
  const powered = new Set<string>();
  const readings = [...byKey].map(([key, { host, physical, labels, values }]) => {
    const powerW = values.powerW === undefined || powered.has(physical) ? null : values.powerW;
    if (powerW !== null) powered.add(physical);
    const model = label(labels, 'modelName', 'card_model', 'card_series', 'product_name');
    const profile = label(labels, 'GPU_I_PROFILE');
    const used = values.memoryUsedMib ?? null;
    const total =
      values.memoryTotalMib ??
      (used !== null && values.memoryFreeMib !== undefined ? used + values.memoryFreeMib + (values.memoryReservedMib ?? 0) : null);
    const utilization = values.utilizationPct ?? (values.engineActive !== undefined ? values.engineActive * 100 : null);
    return {
      key,
      host,
      sample: {
        t,
        uuid: label(labels, 'UUID', 'gpu_uuid', 'serial_number'),
        name: model === null ? null : profile ? `${model} MIG ${profile}` : model,
        memoryUsedMib: used,
        memoryTotalMib: total,
        utilizationPct: utilization,
        memoryUtilizationPct: values.memoryUtilizationPct ?? null,
        temperatureC: values.temperatureC ?? null,
        powerW,
        smClockMhz: values.smClockMhz ?? null,
        pstate: null,
        memClockMhz: values.memClockMhz ?? null,
        throttleReasons: values.throttleReasons ?? null,
      },
    };
  });
  return { kind, readings, page: pageOf(list) };
}
