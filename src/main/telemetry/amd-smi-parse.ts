import type { GpuSample } from '../../shared/contract/telemetry';

/**
 * `amd-smi metric --json`, in every shape it has printed (test/fixtures/captured/amd-smi): a
 * list with one entry per GPU (before amd-smi 26, and watch mode since), `{"gpu_data": [...]}`
 * (amd-smi 26 on), or a single entry (one element of a watch-mode list, read as it completes).
 * A value is `{value, unit}`, a bare number, `"N/A"` or `{value: "N/A"}`; a whole section can be
 * `"N/A"` (an APU's `"usage": "N/A"`). Memory comes in "MB" that are MiB counts (8176 for 8 GiB).
 */
export function readAmdSmiDocument(json: unknown, t: number): { samples: GpuSample[]; notes: string[] } {
  const entries = Array.isArray(json)
    ? json
    : isRecord(json) && Array.isArray(json.gpu_data)
      ? json.gpu_data
      : isRecord(json) && ('gpu' in json || 'usage' in json || 'mem_usage' in json)
        ? [json]
        : [];
  const notes: string[] = [];
  const samples = entries.flatMap((entry, position): GpuSample[] => {
    if (!isRecord(entry)) return [];
    const index = gpuIndex(entry.gpu);
    if (index === null) notes.push(`amd-smi named no GPU index for an entry; numbered ${position} by its place in the output`);
    const gpu = index ?? position;
    const figure = (section: string, key: string, what: string): number | null => {
      const raw = entry[section];
      const value = isRecord(raw) ? reading(raw[key]) : null;
      if (value === null)
        notes.push(
          raw === undefined
            ? `GPU ${gpu}: amd-smi printed no ${section} section, so no ${what}`
            : `GPU ${gpu}: amd-smi reports ${isRecord(raw) ? `${section}.${key}` : section} as ${JSON.stringify(isRecord(raw) ? (valueOf(raw[key]) ?? null) : raw)}, so no ${what}`,
        );
      return value;
    };
    const temperature = isRecord(entry.temperature) ? (reading(entry.temperature.edge) ?? reading(entry.temperature.hotspot)) : null;
    return [
      {
        t,
        index: gpu,
        uuid: null,
        name: null,
        memoryUsedMib: figure('mem_usage', 'used_vram', 'VRAM reading'),
        memoryTotalMib: isRecord(entry.mem_usage) ? mib(entry.mem_usage.total_vram) : null,
        utilizationPct: figure('usage', 'gfx_activity', 'utilization'),
        memoryUtilizationPct: isRecord(entry.usage) ? reading(entry.usage.umc_activity) : null,
        temperatureC: temperature,
        powerW: figure('power', 'socket_power', 'power or energy'),
        smClockMhz: null,
        pstate: null,
        memClockMhz: null,
        throttleReasons: null,
      },
    ];
  });
  return { samples, notes };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function gpuIndex(raw: unknown): number | null {
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0) return raw;
  if (typeof raw === 'string' && /^\d+$/.test(raw.trim())) return Number(raw);
  return null;
}

function valueOf(raw: unknown): unknown {
  return isRecord(raw) && 'value' in raw ? raw.value : raw;
}

/** A number from `{value, unit}`, a bare number or a numeric string; null for "N/A" and anything else. */
function reading(raw: unknown): number | null {
  const inner = valueOf(raw);
  if (typeof inner === 'number') return Number.isFinite(inner) ? inner : null;
  if (typeof inner !== 'string' || !/^-?\d+(\.\d+)?$/.test(inner.trim())) return null;
  return Number(inner);
}

function mib(raw: unknown): number | null {
  const amount = reading(raw);
  const unit = isRecord(raw) && typeof raw.unit === 'string' ? raw.unit : 'MB';
  if (amount === null) return null;
  return /^GB$/i.test(unit) ? amount * 1024 : /^B$/i.test(unit) ? amount / 2 ** 20 : amount;
}
