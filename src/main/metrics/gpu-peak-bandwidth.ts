import type { BandwidthPeak } from '../../shared/contract/runs';

/**
 * Peak memory bandwidth of known GPUs, from NVIDIA's datasheets and product pages (GB/s,
 * 1e9 bytes). nvidia-smi names the board; the first pattern that matches it wins, so the
 * more specific names come first, and a consumer board's pattern refuses its variants.
 */
const KNOWN_GPUS: { pattern: RegExp; label: string; gbPerS: number; source: string }[] = [
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
  { pattern: board('RTX 5090'), label: 'NVIDIA GeForce RTX 5090', gbPerS: 1792, source: 'NVIDIA GeForce RTX 5090 specifications' },
  { pattern: board('RTX 5080'), label: 'NVIDIA GeForce RTX 5080', gbPerS: 960, source: 'NVIDIA GeForce RTX 5080 specifications' },
  { pattern: board('RTX 5070 Ti'), label: 'NVIDIA GeForce RTX 5070 Ti', gbPerS: 896, source: 'NVIDIA GeForce RTX 5070 Ti specifications' },
  { pattern: board('RTX 5070'), label: 'NVIDIA GeForce RTX 5070', gbPerS: 672, source: 'NVIDIA GeForce RTX 5070 specifications' },
  {
    pattern: board('RTX 4090 Laptop GPU'),
    label: 'NVIDIA GeForce RTX 4090 Laptop GPU',
    gbPerS: 576,
    source: 'NVIDIA GeForce RTX 40 Series Laptop specifications',
  },
  { pattern: board('RTX 4090'), label: 'NVIDIA GeForce RTX 4090', gbPerS: 1008, source: 'NVIDIA GeForce RTX 4090 specifications' },
  {
    pattern: board('RTX 4080 SUPER'),
    label: 'NVIDIA GeForce RTX 4080 SUPER',
    gbPerS: 736,
    source: 'NVIDIA GeForce RTX 4080 SUPER specifications',
  },
  {
    pattern: board('RTX 4080 Laptop GPU'),
    label: 'NVIDIA GeForce RTX 4080 Laptop GPU',
    gbPerS: 432,
    source: 'NVIDIA GeForce RTX 40 Series Laptop specifications',
  },
  { pattern: board('RTX 4080'), label: 'NVIDIA GeForce RTX 4080', gbPerS: 716.8, source: 'NVIDIA GeForce RTX 4080 specifications' },
  {
    pattern: board('RTX 4070 Ti SUPER'),
    label: 'NVIDIA GeForce RTX 4070 Ti SUPER',
    gbPerS: 672,
    source: 'NVIDIA GeForce RTX 4070 family specifications',
  },
  {
    pattern: board('RTX 4070 Ti'),
    label: 'NVIDIA GeForce RTX 4070 Ti',
    gbPerS: 504,
    source: 'NVIDIA GeForce RTX 4070 family specifications',
  },
  {
    pattern: board('RTX 4070 SUPER'),
    label: 'NVIDIA GeForce RTX 4070 SUPER',
    gbPerS: 504,
    source: 'NVIDIA GeForce RTX 4070 family specifications',
  },
  { pattern: board('RTX 4070'), label: 'NVIDIA GeForce RTX 4070', gbPerS: 504, source: 'NVIDIA GeForce RTX 4070 family specifications' },
  {
    pattern: board('RTX 4060 Ti'),
    label: 'NVIDIA GeForce RTX 4060 Ti',
    gbPerS: 288,
    source: 'NVIDIA GeForce RTX 4060 family specifications',
  },
  { pattern: board('RTX 4060'), label: 'NVIDIA GeForce RTX 4060', gbPerS: 272, source: 'NVIDIA GeForce RTX 4060 family specifications' },
  { pattern: board('RTX 3090 Ti'), label: 'NVIDIA GeForce RTX 3090 Ti', gbPerS: 1008, source: 'NVIDIA GeForce RTX 3090 Ti specifications' },
  { pattern: board('RTX 3090'), label: 'NVIDIA GeForce RTX 3090', gbPerS: 936, source: 'NVIDIA GeForce RTX 3090 specifications' },
  {
    pattern: board('RTX 3080 Ti'),
    label: 'NVIDIA GeForce RTX 3080 Ti',
    gbPerS: 912,
    source: 'NVIDIA GeForce RTX 3080 family specifications',
  },
  {
    pattern: board('RTX 3080'),
    label: 'NVIDIA GeForce RTX 3080 (10 GB)',
    gbPerS: 760,
    source: 'NVIDIA GeForce RTX 3080 family specifications',
  },
  { pattern: board('RTX 3070'), label: 'NVIDIA GeForce RTX 3070', gbPerS: 448, source: 'NVIDIA GeForce RTX 3070 family specifications' },
  { pattern: /RTX A6000/i, label: 'NVIDIA RTX A6000', gbPerS: 768, source: 'NVIDIA RTX A6000 datasheet' },
  { pattern: /RTX 6000 Ada/i, label: 'NVIDIA RTX 6000 Ada', gbPerS: 960, source: 'NVIDIA RTX 6000 Ada datasheet' },
];

/**
 * A consumer board by its exact name: the name may go on with a memory size ("12GB") but not with
 * a variant (Ti, SUPER, Laptop GPU, D), which has a figure of its own or none known.
 */
function board(model: string): RegExp {
  const escaped = model.replace(/ /g, '\\s+');
  return new RegExp(`${escaped}(?!\\s*(?:Ti|SUPER|Laptop|Mobile|D\\b|Max-Q)\\b)(?![\\w])`, 'i');
}

/** The datasheet peak of one GPU by its nvidia-smi name, or null with the reason. */
export function gpuPeakBandwidth(name: string | null): { peak: BandwidthPeak | null; reason: string | null } {
  if (!name) return { peak: null, reason: 'the GPU did not report its name' };
  const known = KNOWN_GPUS.find((gpu) => gpu.pattern.test(name));
  if (!known)
    return { peak: null, reason: `${name} is not in the table of known GPUs' peak bandwidth (src/main/metrics/gpu-peak-bandwidth.ts)` };
  return { peak: { gb_per_s: known.gbPerS, kind: 'gpu datasheet', label: known.label, source: known.source }, reason: null };
}
