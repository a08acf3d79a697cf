import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import si from 'systeminformation';
import { keptReading } from '../core/kept-reading';
import { userCacheDir } from '../core/paths';
import { reusedReading } from '../core/reused-reading';

export interface EnvironmentFingerprint {
  os: { platform: string; distro: string | null; release: string; kernel: string; arch: string };
  cpu: { model: string; cores: number; physicalCores: number | null };
  memoryBytes: number;
  gpus: { vendor: string; model: string; vramMib: number | null; driver: string | null }[];
  node: string;
}

/** What the machine's inventory tools report; the rest of the fingerprint Node knows at once. */
interface Inventory {
  distro: string | null;
  kernel: string | null;
  cpuModel: string | null;
  physicalCores: number | null;
  gpus: EnvironmentFingerprint['gpus'];
}

/**
 * Reading the inventory spawns a score of processes (lspci, lscpu, nvidia-smi, …) for half a
 * second or more, and it changes only with an update or a reboot: an experiment's windows, a
 * minute apart, share one reading, and so do the CLI's commands (the reading is kept in the
 * cache folder); a long-running app reads it again after ten minutes.
 */
const INVENTORY_KEEP_MS = 10 * 60_000;
const readInventory = reusedReading(INVENTORY_KEEP_MS, () =>
  keptReading({
    file: path.join(userCacheDir(), 'host-inventory.json'),
    key: inventoryKey(),
    keepMs: INVENTORY_KEEP_MS,
    maxBytes: 256 * 1024,
    isValue: isInventory,
    read: takeInventory,
  }),
);

/**
 * A reboot, another kernel or other tools on PATH (the GPU tools the inventory asks) make another
 * inventory. The boot is known to the minute: a clock step across a minute only costs a reading.
 */
function inventoryKey(): string {
  const bootedAtMinute = Math.round((Date.now() - os.uptime() * 1000) / 60_000);
  const tools = crypto
    .createHash('sha256')
    .update(process.env.PATH ?? '')
    .digest('hex')
    .slice(0, 16);
  return `${bootedAtMinute} ${os.release()} ${process.arch} ${tools}`;
}

async function takeInventory(): Promise<Inventory> {
  const [osInfo, cpu, graphics] = await Promise.all([
    si.osInfo().catch(() => null),
    si.cpu().catch(() => null),
    si.graphics().catch(() => null),
  ]);
  return {
    distro: osInfo ? `${osInfo.distro} ${osInfo.release}`.trim() : null,
    kernel: osInfo?.kernel || null,
    cpuModel: cpu ? `${cpu.manufacturer} ${cpu.brand}`.trim() : null,
    physicalCores: cpu?.physicalCores ?? null,
    gpus: (graphics?.controllers ?? [])
      .filter((controller) => /nvidia|amd|advanced micro|intel|apple/i.test(controller.vendor ?? ''))
      .map((controller) => ({
        vendor: controller.vendor,
        model: controller.model,
        vramMib: controller.vram ?? null,
        driver: controller.driverVersion || null,
      })),
  };
}

const nullOr = (value: unknown, type: 'string' | 'number') => value === null || typeof value === type;

function isInventory(value: unknown): value is Inventory {
  if (typeof value !== 'object' || value === null) return false;
  const inventory = value as Record<string, unknown>;
  return (
    nullOr(inventory.distro, 'string') &&
    nullOr(inventory.kernel, 'string') &&
    nullOr(inventory.cpuModel, 'string') &&
    nullOr(inventory.physicalCores, 'number') &&
    Array.isArray(inventory.gpus) &&
    inventory.gpus.every((gpu: Record<string, unknown> | null) => {
      if (typeof gpu !== 'object' || gpu === null) return false;
      return (
        typeof gpu.vendor === 'string' && typeof gpu.model === 'string' && nullOr(gpu.vramMib, 'number') && nullOr(gpu.driver, 'string')
      );
    })
  );
}

/** Once per run: what the run ran on. Inventory only; sampling uses other means. */
export async function captureEnvironment(): Promise<EnvironmentFingerprint> {
  const inventory = await readInventory();
  return {
    os: {
      platform: process.platform,
      distro: inventory.distro,
      release: os.release(),
      kernel: inventory.kernel ?? os.release(),
      arch: process.arch,
    },
    cpu: {
      model: inventory.cpuModel ?? os.cpus()[0]?.model ?? 'unknown',
      cores: os.availableParallelism(),
      physicalCores: inventory.physicalCores,
    },
    memoryBytes: os.totalmem(),
    gpus: inventory.gpus,
    node: process.version,
  };
}
