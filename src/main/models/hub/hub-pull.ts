import fs from 'node:fs';
import path from 'node:path';
import { modelInfo } from '@huggingface/hub';
import type { ModelPull, PulledModel, PullProgress } from '../../../shared/contract/models';
import { ErrorCode } from '../../../shared/errors';
import { memorySize } from '../../../shared/memory-size';
import { AppError } from '../../core/errors';
import { chooseCandidates, groupCandidates, isProjector, type CandidateFiles } from '../plan/candidates';
import { parseHubRef, type HubRepoRef } from './hub-access';
import {
  cachedCommit,
  COMMIT_HASH,
  hubCacheDir,
  linkSnapshotFile,
  repoCache,
  safeRepoPath,
  SHA256_HEX,
  sizeOnDisk,
  writeRef,
  type RepoCache,
} from './hub-cache';
import { lockDownload, type DownloadLock } from './download-lock';
import { downloadHubFile } from './hub-download';
import { hubRequestFailure, listHubFiles, openHubSession, type HubFile, type HubOptions, type HubSession } from './hub-files';

export interface PullOptions extends HubOptions {
  signal: AbortSignal;
  onProgress?: (progress: PullProgress) => void;
  /** A cancel (not a dropped connection) deletes the file being downloaded, so no partial file is left anywhere. */
  discardPartialOnCancel?: boolean;
  /** Free bytes where the cache lives; the file system's own figure unless a caller knows better. */
  freeBytes?: (dir: string) => Promise<number>;
  downloadTuning?: { attempts?: number; stallMs?: number; retryDelayMs?: number };
}

const PROGRESS_INTERVAL_MS = 100;

/** Room left beyond the files themselves, so a pull does not fill the disk to the last byte. */
const FREE_SPACE_MARGIN_BYTES = 256 * 2 ** 20;

async function resolveCommit(ref: HubRepoRef, session: HubSession): Promise<string> {
  if (COMMIT_HASH.test(ref.revision)) return ref.revision;
  let sha: unknown;
  try {
    sha = (
      await modelInfo({ name: ref.repo, revision: ref.revision, additionalFields: ['sha'], hubUrl: session.endpoint, fetch: session.fetch })
    ).sha;
  } catch (error) {
    throw hubRequestFailure(session, ref, error, 'the model information');
  }
  if (typeof sha !== 'string' || !COMMIT_HASH.test(sha))
    throw new AppError(ErrorCode.RequestFailed, `the hub at ${session.endpoint} gave no commit for ${ref.repo}@${ref.revision}`);
  return sha;
}

/** The candidates a pull fetches: the named quantizations, every one for "all", or the only one there is. */
function chosenForPull(candidates: CandidateFiles[], quants: string[] | 'all', source: string): CandidateFiles[] {
  const labels = candidates.map((candidate) => candidate.label).join(', ');
  if (candidates.length === 0) throw new AppError(ErrorCode.NotFound, `${source} has no GGUF model files`);
  if (quants !== 'all' && quants.length === 0) {
    // A projector beside the only model is pulled when named: a repository often holds several (F16, Q8_0).
    const models = candidates.filter((candidate) => !isProjector(candidate.files[0]!));
    if (models.length === 1) return models;
    throw new AppError(
      ErrorCode.Usage,
      `${source} has ${candidates.length} ${models.length === candidates.length ? 'quantizations' : 'files to pull'} (${labels}): name the ones to pull with --quants, or --quants all`,
    );
  }
  const { chosen, unmatched } = chooseCandidates(candidates, quants);
  if (unmatched.length > 0) throw new AppError(ErrorCode.NotFound, `${source} has no ${unmatched.join(', ')}; it has ${labels}`);
  return chosen;
}

/** Each file as a pull needs it, refused when the listing names a path or a digest that could not be trusted on disk. */
function verifiable(file: HubFile, source: string): VerifiableFile {
  if (!safeRepoPath(file.path))
    throw new AppError(
      ErrorCode.InvalidInput,
      `${source} lists a file named "${file.path}", which is not a plain relative path; nothing was written`,
    );
  if (!file.sha256 || !SHA256_HEX.test(file.sha256))
    throw new AppError(
      ErrorCode.InvalidInput,
      `${source} lists ${file.path} without a SHA-256 (an LFS oid) to check the download against; nothing was written`,
    );
  return file as VerifiableFile;
}

/** The nearest folder that exists at or above `dir`, whose file system the cache will be written to. */
function existingAncestor(dir: string): string {
  let current = path.resolve(dir);
  while (!fs.existsSync(current) && path.dirname(current) !== current) current = path.dirname(current);
  return current;
}

async function fileSystemFree(dir: string): Promise<number> {
  const stats = await fs.promises.statfs(existingAncestor(dir));
  return stats.bavail * stats.bsize;
}

function checkFreeSpace(needed: number, free: number, cacheDir: string): void {
  if (needed + FREE_SPACE_MARGIN_BYTES <= free) return;
  throw new AppError(
    ErrorCode.StorageFailed,
    `not enough disk space: the pull needs ${memorySize(needed)} more and ${cacheDir} has ${memorySize(free)} free; free space, or set HF_HUB_CACHE to a disk with room`,
  );
}

/** What a pull will fetch, settled before any byte is downloaded: the commit, the files, the room it needs. */
export interface PreparedPull {
  source: string;
  ref: HubRepoRef;
  commit: string;
  session: HubSession;
  cacheDir: string;
  cache: RepoCache;
  chosen: CandidateFiles[];
  byPath: Map<string, HubFile>;
  files: VerifiableFile[];
  /** Paths whose blob is not in the cache yet. */
  missing: Set<string>;
  problems: string[];
}

type VerifiableFile = HubFile & { sha256: string };

/**
 * Settles a pull with the hub (its commit, listing and the chosen quantizations) and checks the
 * disk has room, so a wrong name, a gated model or a full disk is refused before anything starts.
 */
export async function preparePull(
  source: string,
  quants: string[] | 'all',
  options: Pick<PullOptions, 'env' | 'freeBytes'> & { signal?: AbortSignal },
): Promise<PreparedPull> {
  const ref = parseHubRef(source);
  const session = openHubSession(options);
  const commit = await resolveCommit(ref, session);
  const listing = await listHubFiles({ repo: ref.repo, revision: commit }, session);
  const byPath = new Map(listing.map((file) => [file.path, file]));
  const { candidates, problems } = groupCandidates(listing.map((file) => file.path));
  const chosen = chosenForPull(candidates, quants, source);
  const files = chosen.flatMap((candidate) => candidate.files.map((file) => verifiable(byPath.get(file)!, source)));

  const cacheDir = hubCacheDir(options.env);
  const cache = repoCache(cacheDir, ref.repo);
  const missing = new Set(files.filter((file) => sizeOnDisk(cache.blob(file.sha256)) !== file.size).map((file) => file.path));
  const needed = files.filter((file) => missing.has(file.path)).reduce((sum, file) => sum + file.size - partialBytes(cache, file), 0);
  if (needed > 0) checkFreeSpace(needed, await (options.freeBytes ?? fileSystemFree)(cacheDir), cacheDir);
  return { source, ref, commit, session, cacheDir, cache, chosen, byPath, files, missing, problems };
}

function partialBytes(cache: RepoCache, file: VerifiableFile): number {
  return Math.min(file.size, sizeOnDisk(cache.partial(file.sha256)) ?? 0);
}

/**
 * Downloads a prepared pull into the Hugging Face cache layout: each file verified against the
 * hub's SHA-256 before it appears in a snapshot, an interrupted download resumed, split parts
 * kept together as one model.
 */
export async function executePull(prepared: PreparedPull, options: PullOptions): Promise<ModelPull> {
  const { source, ref, commit, cacheDir, cache, chosen, byPath, files, missing, problems } = prepared;
  const pinned: HubRepoRef = { repo: ref.repo, revision: commit };
  const toFetch = files.filter((file) => missing.has(file.path));
  const progress = pullProgress(files, missing, options.onProgress);
  // Every file to fetch is claimed before the first byte: a pull that would collide with another learns it at once.
  const locks: DownloadLock[] = [];
  try {
    for (const file of toFetch) {
      await fs.promises.mkdir(path.dirname(cache.blob(file.sha256)), { recursive: true });
      locks.push(await lockDownload(cache.partial(file.sha256), file.path));
    }
    for (const file of toFetch) await fetchVerified(prepared, file, pinned, progress, options);
  } finally {
    for (const lock of locks) await lock.release();
  }
  const models: PulledModel[] = [];
  for (const candidate of chosen) {
    const paths: string[] = [];
    for (const file of candidate.files) paths.push(await linkSnapshotFile(cache, commit, file, byPath.get(file)!.sha256!));
    models.push({
      label: candidate.label,
      files: paths,
      sizeBytes: candidate.files.reduce((sum, file) => sum + byPath.get(file)!.size, 0),
      alreadyCached: candidate.files.every((file) => !missing.has(file)),
    });
  }
  await writeRef(cache, ref.revision, commit);
  return { source, revision: ref.revision, commit, cacheDir, models, downloadedBytes: progress.downloaded(), problems };
}

/** One file into its blob: resumed where a partial copy stops, renamed into place only once its SHA-256 matched. */
async function fetchVerified(
  prepared: PreparedPull,
  file: VerifiableFile,
  pinned: HubRepoRef,
  progress: ReturnType<typeof pullProgress>,
  options: PullOptions,
): Promise<void> {
  const { source, session, cache } = prepared;
  // Another pull may have finished it while this one waited to start.
  if (sizeOnDisk(cache.blob(file.sha256)) === file.size) {
    progress.begin(file, file.size);
    progress.finish(file);
    return;
  }
  progress.begin(file, partialBytes(cache, file));
  try {
    await downloadHubFile(pinned, file, cache.partial(file.sha256), session, {
      ...options.downloadTuning,
      signal: options.signal,
      onBytes: (bytesDone) => progress.bytes(file, bytesDone),
    });
  } catch (error) {
    if (!options.signal.aborted) throw error;
    if (options.discardPartialOnCancel) await fs.promises.rm(cache.partial(file.sha256), { force: true });
    throw new AppError(
      ErrorCode.RequestFailed,
      options.discardPartialOnCancel
        ? `the pull of ${source} was cancelled; the file being downloaded was deleted`
        : `the pull of ${source} was cancelled; ${file.path} is kept in part: pull again to resume`,
    );
  }
  await fs.promises.rename(cache.partial(file.sha256), cache.blob(file.sha256));
  progress.finish(file);
}

/** Prepares and downloads in one step. */
export async function pullModels(source: string, quants: string[] | 'all', options: PullOptions): Promise<ModelPull> {
  return executePull(await preparePull(source, quants, options), options);
}

/** Counts a pull's bytes: what is in place, what arrives now, and what earlier interrupted downloads had left. */
function pullProgress(files: readonly HubFile[], missing: ReadonlySet<string>, onProgress: PullOptions['onProgress']) {
  const started = Date.now();
  const bytesTotal = files.reduce((sum, file) => sum + file.size, 0);
  let bytesInPlace = files.filter((file) => !missing.has(file.path)).reduce((sum, file) => sum + file.size, 0);
  let downloadedBefore = 0;
  let resumedFrom = 0;
  let current = 0;
  let lastEmit = 0;
  const emit = (file: HubFile) => {
    lastEmit = Date.now();
    onProgress?.({
      file: file.path,
      fileBytesDone: current,
      fileBytesTotal: file.size,
      bytesDone: bytesInPlace + current,
      bytesTotal,
      downloadedBytes: downloadedBefore + current - resumedFrom,
      elapsedMs: Date.now() - started,
    });
  };
  return {
    begin(file: HubFile, resumed: number) {
      resumedFrom = resumed;
      current = resumed;
      emit(file);
    },
    bytes(file: HubFile, done: number) {
      current = done;
      // A download delivers thousands of chunks a second; a progress line a tenth of a second is plenty.
      if (done === file.size || Date.now() - lastEmit >= PROGRESS_INTERVAL_MS) emit(file);
    },
    finish(file: HubFile) {
      bytesInPlace += file.size;
      downloadedBefore += file.size - resumedFrom;
      current = 0;
      resumedFrom = 0;
    },
    downloaded: () => downloadedBefore,
  };
}

/**
 * The quantizations of a repository already in the cache at a revision (no network): what a
 * finished pull left, for a comparison to start from.
 */
export async function cachedModels(source: string, quants: string[] | 'all', env: NodeJS.ProcessEnv = process.env): Promise<PulledModel[]> {
  const ref = parseHubRef(source);
  const cache = repoCache(hubCacheDir(env), ref.repo);
  const commit = await cachedCommit(cache, ref.revision);
  if (!commit) return [];
  const snapshot = cache.snapshot(commit);
  const found: string[] = [];
  const walk = async (dir: string, depth: number) => {
    for (const entry of await fs.promises.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && depth < 4) await walk(full, depth + 1);
      else if (entry.name.toLowerCase().endsWith('.gguf') && sizeOnDisk(full) !== null)
        found.push(path.relative(snapshot, full).split(path.sep).join('/'));
    }
  };
  await walk(snapshot, 0);
  const { chosen } = chooseCandidates(groupCandidates(found).candidates, quants);
  return chosen.map((candidate) => ({
    label: candidate.label,
    files: candidate.files.map((file) => cache.snapshot(commit, file)),
    sizeBytes: candidate.files.reduce((sum, file) => sum + (sizeOnDisk(cache.snapshot(commit, file)) ?? 0), 0),
    alreadyCached: true,
  }));
}
