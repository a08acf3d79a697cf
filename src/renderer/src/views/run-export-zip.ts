import type { RunExport } from '../../../shared/contract';
import { runExportFiles } from '../../../shared/run-export-files';
import { zipFiles } from '../../../shared/zip';

/** A run's export files as one archive, in a folder named for the run: the files `inferlab export` writes. */
export function runExportZip(rendered: RunExport, modified = new Date()): Uint8Array {
  return zipFiles(
    runExportFiles(rendered).map((file) => ({ name: `${rendered.fileBase}/${file.name}`, content: file.content })),
    modified,
  );
}
