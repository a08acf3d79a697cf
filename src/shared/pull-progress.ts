import type { PullProgress } from './contract/models';
import { memorySize } from './memory-size';

function duration(seconds: number): string {
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')} min`;
}

/** A pull's progress as a package manager prints it: the file, bytes of the whole pull, rate, time left (the CLI's line and the Models view's). */
export function pullProgressLine(progress: PullProgress): string {
  const share = progress.bytesTotal > 0 ? Math.floor((progress.bytesDone / progress.bytesTotal) * 100) : 100;
  const rate = progress.elapsedMs >= 500 ? (progress.downloadedBytes / progress.elapsedMs) * 1000 : null;
  const left = rate && rate > 0 ? `, ${duration((progress.bytesTotal - progress.bytesDone) / rate)} left` : '';
  const name = progress.file.split('/').pop();
  return `${name}: ${memorySize(progress.bytesDone)} of ${memorySize(progress.bytesTotal)} (${share} %)${rate === null ? '' : `, ${memorySize(rate)}/s`}${left}`;
}
