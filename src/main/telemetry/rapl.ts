import fs from 'node:fs';
import path from 'node:path';

/** One RAPL package domain: its counter and the value at which the counter wraps to 0. */
interface RaplDomain {
  name: string;
  energyFile: string;
  maxRangeUj: number;
  lastUj: number;
  totalUj: number;
}

export const POWERCAP_ROOT = '/sys/class/powercap';

/** Why RAPL cannot be read here, or the package domains it offers. */
export function findRaplDomains(root = POWERCAP_ROOT): { domains: { name: string; dir: string }[]; reason: string | null } {
  let entries: string[];
  try {
    entries = fs.readdirSync(root);
  } catch {
    return { domains: [], reason: `${root} is absent: no RAPL energy counters (common in virtual machines)` };
  }
  // Top-level zones only (intel-rapl:0, not intel-rapl:0:0): subzones are parts of their package and would count twice.
  const zones = entries.filter((entry) => /^intel-rapl:\d+$/.test(entry)).sort();
  const domains = zones
    .map((zone) => ({ zone, name: readText(path.join(root, zone, 'name')) ?? zone }))
    // psys (the whole platform) overlaps the packages; packages are what this machine's CPUs draw.
    .filter((domain) => domain.name.startsWith('package'))
    .map((domain) => ({ name: domain.name, dir: path.join(root, domain.zone) }));
  if (domains.length === 0) return { domains, reason: `${root} has no intel-rapl package zone: no CPU energy counters` };
  return { domains, reason: null };
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

function readCounter(file: string): { value: number } | { error: string } {
  try {
    const value = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isFinite(value) ? { value } : { error: `${file} does not hold a number` };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') return { error: `${file} is readable only by root (Linux 5.10 and later)` };
    return { error: `${file} cannot be read (${code ?? (error as Error).message})` };
  }
}

/**
 * CPU package energy from RAPL counters over a window. The counters wrap at
 * max_energy_range_uj (a few hundred kJ: minutes at full load), so the meter is read often
 * enough that at most one wrap falls between two readings, and each wrap adds the range back.
 */
export class RaplMeter {
  private domains: RaplDomain[] = [];
  private failure: string | null = null;

  constructor(private readonly root = POWERCAP_ROOT) {}

  start(): void {
    const found = findRaplDomains(this.root);
    if (found.reason) {
      this.failure = found.reason;
      return;
    }
    for (const domain of found.domains) {
      const energyFile = path.join(domain.dir, 'energy_uj');
      const counter = readCounter(energyFile);
      const range = readCounter(path.join(domain.dir, 'max_energy_range_uj'));
      if ('error' in counter || 'error' in range) {
        this.failure = 'error' in counter ? counter.error : (range as { error: string }).error;
        this.domains = [];
        return;
      }
      this.domains.push({ name: domain.name, energyFile, maxRangeUj: range.value, lastUj: counter.value, totalUj: 0 });
    }
  }

  /** Adds what each counter rose since the last reading. */
  read(): void {
    for (const domain of this.domains) {
      const counter = readCounter(domain.energyFile);
      if ('error' in counter) {
        this.failure = counter.error;
        continue;
      }
      const rise = counter.value - domain.lastUj;
      domain.totalUj += rise >= 0 ? rise : rise + domain.maxRangeUj;
      domain.lastUj = counter.value;
    }
  }

  get unavailableReason(): string | null {
    return this.failure;
  }

  /** Joules over every package since start(), or null with the reason. */
  result(): { joules: number | null; domains: string[]; reason: string | null } {
    if (this.failure || this.domains.length === 0)
      return { joules: null, domains: [], reason: this.failure ?? 'RAPL was not read over the window' };
    return {
      joules: this.domains.reduce((sum, domain) => sum + domain.totalUj, 0) / 1e6,
      domains: this.domains.map((d) => d.name),
      reason: null,
    };
  }
}
