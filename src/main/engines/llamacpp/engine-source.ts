import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { mustRun, packPinnedPackage } from './pinned-package';

/**
 * The llama.cpp source is the git bundle shipped inside this exact npm package. Pinned by
 * version and by the registry's integrity hash, so a republished tarball is refused.
 */
export const PINNED_SOURCE = {
  packageName: 'node-llama-cpp',
  version: '3.21.1',
  integrity: 'sha512-E3N0Ev2Va0wzydvXYFwM9Hvyo07PoWjt8T/9GMc43Cvt8YkV/NU/tYUgEMC1grTPv2o9PRjQi0G3Wb5P/awiMg==',
  bundlePathInPackage: 'package/llama/gitRelease.bundle',
} as const;

export interface PinnedSourceRecord {
  packageName: string;
  version: string;
  commit: string;
}

function recordPath(engineDir: string): string {
  return path.join(engineDir, `${PINNED_SOURCE.packageName}-${PINNED_SOURCE.version}.json`);
}

/** The commit of the pinned source, if it has been fetched before (no network, no git). */
export function readPinnedSourceRecord(engineDir: string): PinnedSourceRecord | null {
  try {
    const record = JSON.parse(fs.readFileSync(recordPath(engineDir), 'utf8')) as PinnedSourceRecord;
    return record.version === PINNED_SOURCE.version && /^[0-9a-f]{40}$/.test(record.commit) ? record : null;
  } catch {
    return null;
  }
}

export function sourceDirFor(engineDir: string, commit: string): string {
  return path.join(engineDir, `llama.cpp-${commit.slice(0, 12)}`, 'src');
}

/**
 * Makes sure the pinned llama.cpp source is checked out in the cache and returns its
 * commit and folder. Downloads the npm tarball only the first time. A cancel (`signal`)
 * stops the step in progress; the source folder appears only once its checkout is whole.
 */
export async function ensurePinnedSource(
  engineDir: string,
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<{ commit: string; sourceDir: string }> {
  const known = readPinnedSourceRecord(engineDir);
  if (known && fs.existsSync(path.join(sourceDirFor(engineDir, known.commit), 'CMakeLists.txt'))) {
    return { commit: known.commit, sourceDir: sourceDirFor(engineDir, known.commit) };
  }
  fs.mkdirSync(engineDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-source-'));
  try {
    log(`fetching ${PINNED_SOURCE.packageName}@${PINNED_SOURCE.version} from the npm registry (llama.cpp source bundle)`);
    const tarballPath = await packPinnedPackage(
      { name: PINNED_SOURCE.packageName, version: PINNED_SOURCE.version, integrity: PINNED_SOURCE.integrity },
      work,
      { signal },
    );
    await mustRun('extracting the source bundle', 'tar', ['-xzf', tarballPath, '-C', work, PINNED_SOURCE.bundlePathInPackage], { signal });
    const bundle = path.join(work, PINNED_SOURCE.bundlePathInPackage);
    const heads = await mustRun('reading the source bundle', 'git', ['bundle', 'list-heads', bundle], { signal });
    const commit = /^([0-9a-f]{40})\s/m.exec(heads)?.[1];
    if (!commit) throw new AppError(ErrorCode.EngineBuildFailed, `The source bundle lists no commit:\n${heads}`);
    const sourceDir = sourceDirFor(engineDir, commit);
    if (!fs.existsSync(path.join(sourceDir, 'CMakeLists.txt'))) {
      log(`unpacking llama.cpp ${commit.slice(0, 7)}`);
      // Cloned beside its place and renamed into it: a clone stopped halfway is never taken for the source.
      const partial = `${sourceDir}.partial`;
      fs.rmSync(partial, { recursive: true, force: true });
      try {
        await mustRun('cloning the source bundle', 'git', ['clone', '--quiet', bundle, partial], { signal });
        await mustRun('checking out the pinned commit', 'git', ['-C', partial, 'checkout', '--quiet', commit], { signal });
        fs.rmSync(sourceDir, { recursive: true, force: true });
        fs.renameSync(partial, sourceDir);
      } finally {
        fs.rmSync(partial, { recursive: true, force: true });
      }
    }
    const record: PinnedSourceRecord = { packageName: PINNED_SOURCE.packageName, version: PINNED_SOURCE.version, commit };
    fs.writeFileSync(recordPath(engineDir), JSON.stringify(record, null, 2));
    return { commit, sourceDir };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
