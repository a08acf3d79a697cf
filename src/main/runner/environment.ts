import os from 'node:os';
import si from 'systeminformation';
import { reusedReading } from '../core/reused-reading';

export interface EnvironmentFingerprint {
  os: { platform: string; distro: string | null; release: string; kernel: string; arch: string };
  cpu: { model: string; cores: number; physicalCores: number | null };
  memoryBytes: number;
  gpus: { vendor: string; model: string; vramMib: number | null; driver: string | null }[];
  node: string;
}

/**
 * Reading the inventory spawns a score of processes (lspci, lscpu, nvidia-smi, …) for half a
 * second or more, and it changes only with an update or a reboot: an experiment's windows, a
 * minute apart, share one reading, and a long-running app reads it again after ten minutes.
 */
const readInventory = reusedReading(10 * 60_000, () =>
  Promise.all([si.osInfo().catch(() => null), si.cpu().catch(() => null), si.graphics().catch(() => null)]),
);

/** Once per run: what the run ran on. Inventory only; sampling uses other means. */
export async function captureEnvironment(): Promise<EnvironmentFingerprint> {
  const [osInfo, cpu, graphics] = await readInventory();
  return {
    os: {
      platform: process.platform,
      distro: osInfo ? `${osInfo.distro} ${osInfo.release}`.trim() : null,
      release: os.release(),
      kernel: osInfo?.kernel ?? os.release(),
      arch: process.arch,
    },
    cpu: {
      model: cpu ? `${cpu.manufacturer} ${cpu.brand}`.trim() : (os.cpus()[0]?.model ?? 'unknown'),
      cores: os.availableParallelism(),
      physicalCores: cpu?.physicalCores ?? null,
    },
    memoryBytes: os.totalmem(),
    gpus: (graphics?.controllers ?? [])
      .filter((controller) => /nvidia|amd|advanced micro|intel|apple/i.test(controller.vendor ?? ''))
      .map((controller) => ({
        vendor: controller.vendor,
        model: controller.model,
        vramMib: controller.vram ?? null,
        driver: controller.driverVersion || null,
      })),
    node: process.version,
  };
}
