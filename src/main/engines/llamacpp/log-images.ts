/*
 * What llama-server's log says of the pictures it was shown. Its timings give a request's prompt
 * evaluation as one figure, the picture inside it; its log splits it:
 *
 *   0.01.331.538 I slot process_mtmd: id  0 | task 9 | encoding mtmd batch from idx = 23, n_chunks = 1
 *   0.01.356.710 I decoding image batch 1/1, n_tokens_batch = 16
 *   0.01.364.908 I image decoded (batch 1/1) in 8 ms
 *
 * The encoder runs between the first two lines (the pinned build logs them at trace level, which
 * the managed server runs at, with its timestamps, minutes.seconds.milliseconds.microseconds);
 * older builds say it themselves ("image slice encoded in 24194 ms"). Then the picture's
 * embeddings are decoded into the model in batches, each line giving its tokens and its time.
 */

/** One line's own clock, in microseconds; null where the line carries none (a build run without timestamps). */
const TIMESTAMP = /^(\d{1,6})\.(\d{2})\.(\d{3})\.(\d{3}) /;
const ENCODE_BATCH = /encoding mtmd batch from idx = \d{1,9}, n_chunks = (\d{1,6})/;
const SLICE_ENCODED = /\bimage slice encoded in (\d{1,9}) ms/;
const DECODING = /\bdecoding image batch (\d{1,6})\/(\d{1,6}), n_tokens_batch = (\d{1,9})/;
const DECODED = /\bimage decoded \(batch (\d{1,6})\/(\d{1,6})\) in (\d{1,9}) ms/;

function timestampUs(line: string): number | null {
  const match = TIMESTAMP.exec(line);
  if (!match) return null;
  const [minutes, seconds, milliseconds, microseconds] = match.slice(1).map(Number) as [number, number, number, number];
  return ((minutes * 60 + seconds) * 1000 + milliseconds) * 1000 + microseconds;
}

/** One picture as the log decodes it into the model: its tokens and decode time over its batches. */
export interface DecodedImage {
  tokens: number;
  decodeMs: number;
  batches: number;
}

export interface ImageLogFigures {
  /** Each encode's milliseconds: one picture (a slice, on older builds) or a batch of several. */
  encodesMs: number[];
  images: DecodedImage[];
}

/**
 * Reads log lines one at a time and keeps what they say of pictures. Lines of other kinds cost a
 * substring test each: a line is matched against a pattern only once its literal is in it.
 */
export class ImageLogReader {
  private encodeStartUs: number | null = null;
  private readonly encodesMs: number[] = [];
  private readonly images: DecodedImage[] = [];
  private current: DecodedImage | null = null;
  /** Encodes and pictures finished before the measured window opened: the warm-up's, left out of figures(). */
  private beforeWindow = { encodes: 0, images: 0 };

  read(line: string): void {
    if (line.includes('encoding mtmd batch')) {
      if (ENCODE_BATCH.test(line)) this.encodeStartUs = timestampUs(line);
    } else if (line.includes('slice encoded in')) {
      const match = SLICE_ENCODED.exec(line);
      if (match) {
        this.encodesMs.push(Number(match[1]));
        this.encodeStartUs = null;
      }
    } else if (line.includes('decoding image batch')) {
      const match = DECODING.exec(line);
      if (match) this.decoding(Number(match[1]), Number(match[3]), timestampUs(line));
    } else if (line.includes('image decoded (batch')) {
      const match = DECODED.exec(line);
      if (match && this.current) this.decoded(Number(match[1]), Number(match[2]), Number(match[3]));
    }
  }

  private decoding(batch: number, tokens: number, atUs: number | null): void {
    if (batch === 1) {
      // The first batch of a picture: the encoder has finished with it (and with any batched beside it).
      if (this.encodeStartUs !== null && atUs !== null && atUs >= this.encodeStartUs)
        this.encodesMs.push((atUs - this.encodeStartUs) / 1000);
      this.encodeStartUs = null;
      this.current = { tokens: 0, decodeMs: 0, batches: 0 };
    }
    if (this.current) this.current.tokens += tokens;
  }

  private decoded(batch: number, of: number, ms: number): void {
    this.current!.decodeMs += ms;
    this.current!.batches += 1;
    if (batch === of) {
      this.images.push(this.current!);
      this.current = null;
    }
  }

  /**
   * Marks where the measured window opens: what was finished before it (the warm-up requests' pictures,
   * all answered by then) is left out of figures(). A picture still being decoded counts with the window.
   */
  markWindowStart(): void {
    this.beforeWindow = { encodes: this.encodesMs.length, images: this.images.length };
  }

  /** What the lines read since the window opened (or from the start, where it was never marked) say: each encode's time, and each picture decoded into the model. */
  figures(): ImageLogFigures {
    return {
      encodesMs: this.encodesMs.slice(this.beforeWindow.encodes),
      images: this.images.slice(this.beforeWindow.images).map((image) => ({ ...image })),
    };
  }
}
