/** A size in memory as a plan prints it: GiB to one decimal from 1 GiB, whole MiB below. */
export function memorySize(bytes: number): string {
  return bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(1)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`;
}
