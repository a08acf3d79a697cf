import type { ModelPull, PullProgress } from '../../shared/contract/models';
import { memorySize } from '../../shared/memory-size';
import { pullProgressLine } from '../../shared/pull-progress';
import { formatTable } from './format';
import type { ProgressWriter } from './progress';

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
