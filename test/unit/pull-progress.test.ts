import { describe, expect, it } from 'vitest';
import { pullProgressLine } from '../../src/shared/pull-progress';

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const step = { file: 'Q4_K_M/Model-Q4_K_M-00001-of-00002.gguf', fileBytesDone: 0, fileBytesTotal: 0 };

describe('a pull progress line (constructed progress)', () => {
  it('names the file without its folder and gives bytes of the whole pull, share, rate and time left', () => {
    // 1 GiB of 5 GiB, 512 MiB of it received in this pull over 4 s: 128 MiB/s, 4 GiB left → 32 s.
    expect(pullProgressLine({ ...step, bytesDone: GiB, bytesTotal: 5 * GiB, downloadedBytes: 512 * MiB, elapsedMs: 4000 })).toBe(
      'Model-Q4_K_M-00001-of-00002.gguf: 1.0 GiB of 5.0 GiB (20 %), 128 MiB/s, 32 s left',
    );
  });

  it('counts only bytes received in this pull toward the rate, so a resumed file does not look fast', () => {
    // 3 GiB were kept from an interrupted pull; 60 MiB arrived in 10 s: 6 MiB/s, the remaining 1,988 MiB take 331 s.
    const line = pullProgressLine({
      ...step,
      bytesDone: 3 * GiB + 60 * MiB,
      bytesTotal: 5 * GiB,
      downloadedBytes: 60 * MiB,
      elapsedMs: 10_000,
    });
    expect(line).toMatch(/, 6 MiB\/s, 5 min 31 s left$/);
  });

  it('gives no rate before half a second, none when nothing arrived, and hours when the link is slow', () => {
    expect(pullProgressLine({ ...step, bytesDone: 0, bytesTotal: 5 * GiB, downloadedBytes: 0, elapsedMs: 100 })).toBe(
      'Model-Q4_K_M-00001-of-00002.gguf: 0 MiB of 5.0 GiB (0 %)',
    );
    expect(pullProgressLine({ ...step, bytesDone: 0, bytesTotal: 5 * GiB, downloadedBytes: 0, elapsedMs: 5000 })).toBe(
      'Model-Q4_K_M-00001-of-00002.gguf: 0 MiB of 5.0 GiB (0 %), 0 MiB/s',
    );
    expect(pullProgressLine({ ...step, bytesDone: MiB, bytesTotal: 5 * GiB, downloadedBytes: MiB, elapsedMs: 1000 })).toMatch(
      /, 1 h 25 min left$/,
    );
    // An empty pull (every file in place) is complete, not a division by zero.
    expect(pullProgressLine({ ...step, bytesDone: 0, bytesTotal: 0, downloadedBytes: 0, elapsedMs: 0 })).toMatch(/\(100 %\)$/);
  });
});
