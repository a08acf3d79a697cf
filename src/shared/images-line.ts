import type { ImagesSummary } from './contract/runs';

const ms = (value: number | null | undefined) => (value == null ? '—' : `${value.toFixed(1)} ms`);

/** How many tokens a picture took: one figure where all took the same, else the range and the mean. */
function tokensText(tokens: NonNullable<ImagesSummary['tokens_per_image']>): string {
  return tokens.min === tokens.max ? `${tokens.min} tokens each` : `${tokens.min}–${tokens.max} tokens (mean ${tokens.mean.toFixed(1)})`;
}

/**
 * A run's pictures in one line, for the CLI summary and the Run view: what encoding them and
 * decoding them into the model took, apart from the rest of the prompt inside TTFT.
 */
export function imagesLine(images: ImagesSummary | null): string {
  if (images === null)
    return "images: the server's log said nothing of them (a build that logs no image lines, or every picture came from the prompt cache)";
  const decoded = images.tokens_per_image
    ? `${images.images} decoded into the model, ${tokensText(images.tokens_per_image)} (${images.image_tokens} in all), decode p50 ${ms(images.image_decode_ms?.p50)} each`
    : 'none decoded into the model';
  return `images: ${decoded}; encoder p50 ${ms(images.image_encode_ms?.p50)} over ${images.encodes} encode${images.encodes === 1 ? '' : 's'} (max ${ms(images.image_encode_ms?.max)}); from ${images.source}, ${images.measured_window_only ? 'measured requests only' : 'warm-up requests included'}`;
}
