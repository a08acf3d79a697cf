import type { ImagesSummary } from '../../shared/contract/runs';
import { summarize } from './distribution';

/** Where a run's image figures come from, as its summary says it. */
export const IMAGE_LOG_SOURCE = "llama-server's log (its trace level, or an older build's own encode line)";

/** A run's pictures as its server's log told them; null where it spoke of none. */
export function imagesSummary(figures: {
  encodesMs: readonly number[];
  images: readonly { tokens: number; decodeMs: number }[];
}): ImagesSummary | null {
  const { encodesMs, images } = figures;
  if (images.length === 0 && encodesMs.length === 0) return null;
  const tokens = images.map((image) => image.tokens);
  const total = tokens.reduce((sum, value) => sum + value, 0);
  return {
    images: images.length,
    image_tokens: total,
    tokens_per_image: tokens.length === 0 ? null : { mean: total / tokens.length, min: Math.min(...tokens), max: Math.max(...tokens) },
    encodes: encodesMs.length,
    image_encode_ms: encodesMs.length === 0 ? null : summarize(encodesMs),
    image_decode_ms: images.length === 0 ? null : summarize(images.map((image) => image.decodeMs)),
    source: IMAGE_LOG_SOURCE,
    measured_window_only: true,
  };
}
