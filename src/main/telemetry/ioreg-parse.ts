import type { GpuSample } from '../../shared/contract/telemetry';

/** What no Mac reports without sudo: said once per run instead of a zero. */
export const MAC_POWER_NOTE = 'macOS reports GPU power only through powermetrics, which needs sudo: no power or energy for this GPU';

/**
 * `ioreg -r -d 1 -w 0 -c IOAccelerator`: one node per GPU (`+-o AGXAcceleratorG16X  <class …>`),
 * each with a one-line `"PerformanceStatistics" = {"key"=value,…}`. Apple GPUs give
 * "Device Utilization %" and "In use system memory" (bytes of unified memory the GPU holds); an
 * AMD GPU in an Intel Mac gives "inUseVidMemoryBytes" and "vramFreeBytes". Captured outputs are in
 * test/fixtures/captured/ioreg. Key names are matched whole: "In use system memory (driver)"
 * comes first on an M4 Pro, and the legend line names the same words in other places.
 */
export function parseIoregAccelerators(text: string, t: number): { samples: GpuSample[]; notes: string[] } {
  const nodes = text.split(/^\s*\+-o /m).slice(1);
  const notes: string[] = [];
  const samples = nodes.flatMap((node, index): GpuSample[] => {
    const statistics = performanceStatistics(node);
    const className = /^(\S+)/.exec(node)?.[1] ?? 'IOAccelerator';
    const model = /^\s*"model" = "([^"]*)"/m.exec(node)?.[1];
    const cores = /^\s*"gpu-core-count" = (\d+)/m.exec(node)?.[1];
    const name = model ? `${model}${cores ? ` (${cores}-core GPU)` : ''}` : className;
    if (!statistics) {
      notes.push(`GPU ${index} (${name}): ioreg shows no PerformanceStatistics, so no utilization or memory`);
      return [];
    }
    const bytes = (key: string) => (statistics.has(key) ? statistics.get(key)! / 2 ** 20 : null);
    const used = bytes('In use system memory') ?? bytes('inUseVidMemoryBytes');
    const free = bytes('vramFreeBytes');
    const utilization = statistics.get('Device Utilization %') ?? null;
    if (utilization === null) notes.push(`GPU ${index} (${name}): ioreg reports no "Device Utilization %", so no utilization`);
    if (used === null) notes.push(`GPU ${index} (${name}): ioreg reports no GPU memory in use`);
    return [
      {
        t,
        index,
        uuid: null,
        name,
        memoryUsedMib: used,
        // Unified memory has no size of its own; a discrete GPU's is what it uses plus what is free.
        memoryTotalMib: used !== null && free !== null ? used + free : null,
        utilizationPct: utilization,
        memoryUtilizationPct: null,
        temperatureC: null,
        powerW: null,
        smClockMhz: null,
        pstate: null,
        memClockMhz: null,
        throttleReasons: null,
      },
    ];
  });
  if (samples.length > 0) notes.push(MAC_POWER_NOTE);
  return { samples, notes };
}

/** The flat `{"key"=integer,…}` after `"PerformanceStatistics" =` (not "PerformanceStatisticsAccum"). */
function performanceStatistics(node: string): Map<string, number> | null {
  const match = /"PerformanceStatistics" = \{([^{}]*)\}/.exec(node);
  if (!match) return null;
  const values = new Map<string, number>();
  for (const pair of match[1]!.matchAll(/"([^"]+)"=(-?\d+)/g)) values.set(pair[1]!, Number(pair[2]));
  return values;
}
