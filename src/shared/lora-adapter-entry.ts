/**
 * `FILE` or `FILE@SCALE`, as the CLI's --adapters and the experiment form take each adapter → the
 * adapter and its scale (none: 1). A scale that is no number stays NaN, for the service's check to name.
 */
export function loraAdapterEntry(entry: string): { file: string; scale?: number } {
  const at = entry.lastIndexOf('@');
  if (at <= 0) return { file: entry };
  const scale = entry.slice(at + 1).trim();
  return { file: entry.slice(0, at), scale: scale === '' ? Number.NaN : Number(scale) };
}

/** The most adapters one server loads: llama-server has no limit, but each is a request's choice to keep apart. */
export const MAX_SERVER_ADAPTERS = 8;

/**
 * A profile's loraAdapter as the adapters it names: `FILE[@SCALE]` entries separated by commas
 * (llama-server's own list form), loaded in order, so each adapter's id is its place in the list.
 */
export function loraAdapterEntries(setting: string): { file: string; scale?: number }[] {
  return setting
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      // Only a number after the last @ is a scale: a folder named `models@2` stays part of the path.
      const scaled = /^(.+)@\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*$/i.exec(entry);
      return scaled ? { file: scaled[1]!.trim(), scale: Number(scaled[2]) } : { file: entry };
    });
}
