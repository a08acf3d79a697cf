import { engineCacheDir } from '../core/paths';
import { PINNED_SOURCE, readPinnedSourceRecord } from '../engines/llamacpp/engine-source';
import { MIGRATIONS } from '../store/migrations';

/** What this installation is made of: the pinned engine source, its commit once fetched, and the database schema. */
export function versionInfo(): { engineCommit: string | null; engineSource: string; schemaVersion: number } {
  const record = readPinnedSourceRecord(engineCacheDir());
  return {
    engineCommit: record ? record.commit.slice(0, 12) : null,
    engineSource: `${PINNED_SOURCE.packageName}@${PINNED_SOURCE.version}`,
    schemaVersion: MIGRATIONS.length,
  };
}
