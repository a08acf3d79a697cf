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
