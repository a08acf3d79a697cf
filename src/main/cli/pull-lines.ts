import type { ModelPull, PullProgress } from '../../shared/contract/models';
import { memorySize } from '../../shared/memory-size';
import { formatTable } from './format';
import type { ProgressWriter } from './progress';

function duration(seconds: number): string {
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')} min`;
}

/** A pull's progress as a package manager prints it: the file, bytes of the whole pull, rate, time left. */
export function pullProgressLine(progress: PullProgress): string {
  const share = progress.bytesTotal > 0 ? Math.floor((progress.bytesDone / progress.bytesTotal) * 100) : 100;
  const rate = progress.elapsedMs >= 500 ? (progress.downloadedBytes / progress.elapsedMs) * 1000 : null;
  const left = rate && rate > 0 ? `, ${duration((progress.bytesTotal - progress.bytesDone) / rate)} left` : '';
  const name = progress.file.split('/').pop();
  return `${name}: ${memorySize(progress.bytesDone)} of ${memorySize(progress.bytesTotal)} (${share} %)${rate === null ? '' : `, ${memorySize(rate)}/s`}${left}`;
}

/** A pull's progress on stderr: a line as each file starts, and the live counter. */
export function pullProgressPrinter(progress: ProgressWriter): (step: PullProgress) => void {
  let file = '';
  return (step) => {
    if (step.file !== file) {
      file = step.file;
      progress.line(`pulling ${step.file} (${memorySize(step.fileBytesTotal)})`);
    }
    progress.live(pullProgressLine(step));
  };
}

/** The pulled models and where their files are, for the person who asked. */
export function pullSummary(pull: ModelPull): string {
  const rows = [
    ['quant', 'size', 'files', 'status'],
    ...pull.models.map((model) => [
      model.label,
      memorySize(model.sizeBytes),
      model.files.length === 1 ? model.files[0]! : `${model.files[0]} (+${model.files.length - 1} parts)`,
      model.alreadyCached ? 'already in the cache' : 'pulled, SHA-256 checked',
    ]),
  ];
  return [
    `${pull.source} at ${pull.commit.slice(0, 12)} (${pull.revision}): ${memorySize(pull.downloadedBytes)} downloaded into ${pull.cacheDir}`,
    formatTable(rows),
  ].join('\n');
}
