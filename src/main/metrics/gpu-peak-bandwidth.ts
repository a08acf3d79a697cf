import type { BandwidthPeak } from '../../shared/contract/runs';

/**
 * Peak memory bandwidth of known GPUs, from NVIDIA's datasheets and product pages and Apple's
 * chip announcements (GB/s, 1e9 bytes). nvidia-smi names the board, ioreg the Apple chip and
 * its GPU cores; the first pattern that matches wins, so the more specific names come first,
 * and a consumer board's pattern refuses its variants.
 */
interface KnownGpu {
  pattern: RegExp;
  label: string;
  gbPerS: number;
  source: string;
}

const KNOWN_GPUS: KnownGpu[] = [
  { pattern: /H200/i, label: 'NVIDIA H200 (HBM3e)', gbPerS: 4800, source: 'NVIDIA H200 Tensor Core GPU datasheet' },
  { pattern: /H100 NVL/i, label: 'NVIDIA H100 NVL', gbPerS: 3900, source: 'NVIDIA H100 Tensor Core GPU datasheet' },
  { pattern: /H100.*(HBM3|SXM)/i, label: 'NVIDIA H100 SXM5 80GB', gbPerS: 3350, source: 'NVIDIA H100 Tensor Core GPU datasheet' },
  { pattern: /H100.*PCIe/i, label: 'NVIDIA H100 PCIe 80GB', gbPerS: 2000, source: 'NVIDIA H100 Tensor Core GPU datasheet' },
  { pattern: /A100.*80GB.*PCIe/i, label: 'NVIDIA A100 80GB PCIe', gbPerS: 1935, source: 'NVIDIA A100 Tensor Core GPU datasheet' },
  { pattern: /A100.*80GB/i, label: 'NVIDIA A100 80GB SXM', gbPerS: 2039, source: 'NVIDIA A100 Tensor Core GPU datasheet' },
  { pattern: /A100/i, label: 'NVIDIA A100 40GB', gbPerS: 1555, source: 'NVIDIA A100 Tensor Core GPU datasheet' },
  { pattern: /L40S/i, label: 'NVIDIA L40S', gbPerS: 864, source: 'NVIDIA L40S datasheet' },
  { pattern: /L40\b/i, label: 'NVIDIA L40', gbPerS: 864, source: 'NVIDIA L40 datasheet' },
  { pattern: /\bL4\b/i, label: 'NVIDIA L4', gbPerS: 300, source: 'NVIDIA L4 Tensor Core GPU datasheet' },
  { pattern: /\bA10\b/i, label: 'NVIDIA A10', gbPerS: 600, source: 'NVIDIA A10 Tensor Core GPU datasheet' },
  { pattern: /\bT4\b/i, label: 'NVIDIA T4', gbPerS: 320, source: 'NVIDIA T4 Tensor Core GPU datasheet' },
  { pattern: /V100/i, label: 'NVIDIA V100 (SXM2/PCIe)', gbPerS: 900, source: 'NVIDIA V100 Tensor Core GPU datasheet' },
  // A board's name ends where its variant would begin: "RTX 4080" must not take "RTX 4080 SUPER"'s figure.
  geforce('RTX 5090', 1792),
  geforce('RTX 5080', 960),
  geforce('RTX 5070 Ti', 896),
  geforce('RTX 5070', 672),
  geforce('RTX 4090 Laptop GPU', 576, 'RTX 40 Series Laptop'),
  geforce('RTX 4090', 1008),
  geforce('RTX 4080 SUPER', 736),
  geforce('RTX 4080 Laptop GPU', 432, 'RTX 40 Series Laptop'),
  geforce('RTX 4080', 716.8),
  geforce('RTX 4070 Ti SUPER', 672, 'RTX 4070 family'),
  geforce('RTX 4070 Ti', 504, 'RTX 4070 family'),
  geforce('RTX 4070 SUPER', 504, 'RTX 4070 family'),
  geforce('RTX 4070', 504, 'RTX 4070 family'),
  geforce('RTX 4060 Ti', 288, 'RTX 4060 family'),
  geforce('RTX 4060', 272, 'RTX 4060 family'),
  geforce('RTX 3090 Ti', 1008),
  geforce('RTX 3090', 936),
  geforce('RTX 3080 Ti', 912, 'RTX 3080 family'),
  geforce('RTX 3080', 760, 'RTX 3080 family', ' (10 GB)'),
  geforce('RTX 3070', 448, 'RTX 3070 family'),
  { pattern: /RTX A6000/i, label: 'NVIDIA RTX A6000', gbPerS: 768, source: 'NVIDIA RTX A6000 datasheet' },
  { pattern: /RTX 6000 Ada/i, label: 'NVIDIA RTX 6000 Ada', gbPerS: 960, source: 'NVIDIA RTX 6000 Ada datasheet' },
  // Unified memory: the figure is the chip's, shared by CPU and GPU. Where one chip came with two
  // memory buses, the GPU core count tells them apart.
  apple('M1', 68.25, 'LPDDR4X-4266 on a 128-bit bus (Apple gives no figure for M1)'),
  apple('M1 Pro', 200),
  apple('M1 Max', 400),
  apple('M1 Ultra', 800),
  apple('M2', 100),
  apple('M2 Pro', 200),
  apple('M2 Max', 400),
  apple('M2 Ultra', 800),
  apple('M3', 100),
  apple('M3 Pro', 150),
  apple('M3 Max', 300, "Apple's M3 Max announcement (30-core GPU)", 30),
  apple('M3 Max', 400, "Apple's M3 Max announcement (40-core GPU)", 40),
  apple('M3 Ultra', 819),
  apple('M4', 120),
  apple('M4 Pro', 273),
  apple('M4 Max', 410, "Apple's M4 Max announcement (32-core GPU)", 32),
  apple('M4 Max', 546, "Apple's M4 Max announcement (40-core GPU)", 40),
];

/** An Apple chip's entry: its exact name as ioreg's "model" gives it, and for a split chip its GPU core count. */
function apple(chip: string, gbPerS: number, source = `Apple's ${chip} announcement`, gpuCores?: number): KnownGpu {
  const cores = gpuCores === undefined ? '' : `.*\\(${gpuCores}-core GPU\\)`;
  return {
    pattern: new RegExp(`^Apple ${chip}(?!\\s*(?:Pro|Max|Ultra)\\b)(?![\\w])${cores}`),
    label: `Apple ${chip}${gpuCores === undefined ? '' : ` (${gpuCores}-core GPU)`}`,
    gbPerS,
    source,
  };
}

/** A GeForce board's entry: matched by its exact name, labelled and sourced from its product page. */
function geforce(model: string, gbPerS: number, specs = model, labelNote = ''): KnownGpu {
  return {
    pattern: board(model),
    label: `NVIDIA GeForce ${model}${labelNote}`,
    gbPerS,
    source: `NVIDIA GeForce ${specs} specifications`,
  };
}

/**
 * A consumer board by its exact name: the name may go on with a memory size ("12GB") but not with
 * a variant (Ti, SUPER, Laptop GPU, D), which has a figure of its own or none known.
 */
function board(model: string): RegExp {
  const escaped = model.replace(/ /g, '\\s+');
  return new RegExp(`${escaped}(?!\\s*(?:Ti|SUPER|Laptop|Mobile|D\\b|Max-Q)\\b)(?![\\w])`, 'i');
}

/**
 * Why a name has no figure: a Mac whose ioreg gave only the GPU driver's class names no chip; a
 * chip sold with two memory buses needs its GPU core count, which says which one it has.
 */
function unknownReason(name: string): string {
  if (/^AGXAccelerator\w*$/.test(name))
    return `ioreg names only the GPU driver's class (${name}), not the Apple chip, so its datasheet bandwidth is not known`;
  const chip = /^(Apple M\d+(?: (?:Pro|Max|Ultra))?)(?: \((\d+)-core GPU\))?$/.exec(name);
  const variants = chip ? KNOWN_GPUS.filter((gpu) => gpu.label.startsWith(`${chip[1]} (`)) : [];
  if (chip && variants.length > 0) {
    const figures = variants.map((gpu) => `${gpu.gbPerS} GB/s with the ${/\((\d+-core GPU)\)/.exec(gpu.label)?.[1]}`).join(', ');
    const cores = chip[2] ? `a ${chip[2]}-core GPU is neither` : 'its GPU core count was not reported';
    return `${chip[1]} comes with two memory buses (${figures}) and ${cores}, so no figure is taken`;
  }
  return `${name} is not in the table of known GPUs' peak bandwidth (src/main/metrics/gpu-peak-bandwidth.ts)`;
}

/** The datasheet peak of one GPU by its nvidia-smi name, or null with the reason. */
export function gpuPeakBandwidth(name: string | null): { peak: BandwidthPeak | null; reason: string | null } {
  if (!name) return { peak: null, reason: 'the GPU did not report its name' };
  const known = KNOWN_GPUS.find((gpu) => gpu.pattern.test(name));
  if (!known) return { peak: null, reason: unknownReason(name) };
  return { peak: { gb_per_s: known.gbPerS, kind: 'gpu datasheet', label: known.label, source: known.source }, reason: null };
}
