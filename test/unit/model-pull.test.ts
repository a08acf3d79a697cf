import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { getRepoFolderName } from '@huggingface/hub';
import { hubCacheDir, repoFolderName } from '../../src/main/models/hub/hub-cache';
import { cachedModels, pullModels, type PullOptions } from '../../src/main/models/hub/hub-pull';
import { scanModels } from '../../src/main/models/model-library';
import type { PullProgress } from '../../src/shared/contract/models';
import { ErrorCode } from '../../src/shared/errors';
import { STAND_IN_COMMIT, useTinyGgufHub, type StandInHub, type StandInHubOptions, type StandInRepo } from '../support/stand-in-hub';
import { useTempDirs } from '../support/temp';
import { appErrorOf } from '../support/failure';

const tempDir = useTempDirs();
const REPO = 'tiny/Tiny-GGUF';
const SOURCE = `hf:${REPO}`;

const tinyHub = useTinyGgufHub(REPO);
const withHub = (options: Omit<StandInHubOptions, 'repos'> = {}, repo: Partial<StandInRepo> = {}): Promise<StandInHub> =>
  tinyHub.start(options, repo);

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
/** Files are compared by digest: a deep comparison of megabyte buffers takes minutes. */
const digestOf = (file: string) => sha256(fs.readFileSync(file));

/** A pull into a fresh cache of its own, quick to retry: the stand-in drops connections on purpose. */
function pullOptions(
  url: string,
  extra: Partial<PullOptions> & { env?: NodeJS.ProcessEnv } = {},
): PullOptions & { env: NodeJS.ProcessEnv } {
  return {
    signal: new AbortController().signal,
    downloadTuning: { retryDelayMs: 10 },
    ...extra,
    env: { HF_ENDPOINT: url, HF_HOME: tempDir(), ...extra.env },
  };
}

function repoDir(env: NodeJS.ProcessEnv): string {
  return path.join(hubCacheDir(env), 'models--tiny--Tiny-GGUF');
}

function resolveRequests(server: StandInHub, file: string) {
  return server.requests.filter((request) => request.path.includes('/resolve/') && request.path.endsWith(file));
}

const failureOf = appErrorOf;

describe('pulling from a hub repository into the Hugging Face cache (stand-in hub on a local port)', () => {
  it('names a repository folder as the hub library does', () => {
    for (const repo of ['tiny/Tiny-GGUF', 'bartowski/Llama-3.2-1B-Instruct-GGUF', 'Qwen/Qwen2.5-0.5B-Instruct-GGUF', 'single-name'])
      expect(repoFolderName(repo)).toBe(getRepoFolderName({ name: repo, type: 'model' }));
    expect(repoFolderName('Qwen/Qwen2.5-0.5B-Instruct-GGUF')).toBe('models--Qwen--Qwen2.5-0.5B-Instruct-GGUF');
  });

  it('lays the file out as the hub tools do: a blob named by its SHA-256, a relative link in the snapshot, the ref', async () => {
    const server = await withHub();
    const options = pullOptions(server.url);
    const pull = await pullModels(SOURCE, ['Q4_K_M'], options);

    const bytes = tinyHub.files['Tiny-Q4_K_M.gguf']!;
    const root = repoDir(options.env);
    expect(pull.commit).toBe(STAND_IN_COMMIT);
    expect(pull.downloadedBytes).toBe(bytes.length);
    expect(digestOf(path.join(root, 'blobs', sha256(bytes)))).toBe(sha256(bytes));
    const link = path.join(root, 'snapshots', STAND_IN_COMMIT, 'Tiny-Q4_K_M.gguf');
    expect(fs.readlinkSync(link)).toBe(path.join('..', '..', 'blobs', sha256(bytes)));
    expect(fs.readFileSync(path.join(root, 'refs', 'main'), 'utf8')).toBe(STAND_IN_COMMIT);
    expect(pull.models).toEqual([{ label: 'Q4_K_M', files: [link], sizeBytes: bytes.length, alreadyCached: false }]);
    expect(fs.readdirSync(path.join(root, 'blobs')).filter((name) => name.endsWith('.incomplete'))).toEqual([]);

    // The library finds it where it scans the cache, and knows it again without the network.
    const scan = await scanModels([hubCacheDir(options.env)]);
    expect(scan.models.map((model) => model.path)).toEqual([link]);
    expect(await cachedModels(SOURCE, 'all', options.env)).toEqual(pull.models.map((model) => ({ ...model, alreadyCached: true })));

    // A second pull downloads nothing.
    const before = resolveRequests(server, 'Tiny-Q4_K_M.gguf').length;
    const again = await pullModels(SOURCE, ['q4_k_m'], options);
    expect(again.downloadedBytes).toBe(0);
    expect(again.models[0]!.alreadyCached).toBe(true);
    expect(resolveRequests(server, 'Tiny-Q4_K_M.gguf').length).toBe(before);
  });

  it('pulls every part of a split model and lists it once', async () => {
    const server = await withHub({ redirectToCdn: true });
    const options = pullOptions(server.url);
    const pull = await pullModels(SOURCE, ['F16'], options);
    expect(pull.models).toHaveLength(1);
    expect(pull.models[0]!.files.map((file) => path.basename(file))).toEqual([
      'Tiny-F16-00001-of-00002.gguf',
      'Tiny-F16-00002-of-00002.gguf',
    ]);
    for (const [index, file] of pull.models[0]!.files.entries())
      expect(digestOf(file)).toBe(sha256(tinyHub.files[`F16/Tiny-F16-0000${index + 1}-of-00002.gguf`]!));
    const scan = await scanModels([hubCacheDir(options.env)]);
    expect(scan.models).toHaveLength(1);
    expect(scan.models[0]!.parts).toEqual(pull.models[0]!.files);
  });

  it('resumes a dropped connection from where it stopped instead of starting over', async () => {
    const bytes = tinyHub.files['Tiny-Q4_K_M.gguf']!;
    const server = await withHub({ drop: { file: 'Tiny-Q4_K_M.gguf', afterBytes: 1 << 20, times: 1 } });
    const pull = await pullModels(SOURCE, ['Q4_K_M'], pullOptions(server.url));
    expect(digestOf(pull.models[0]!.files[0]!)).toBe(sha256(bytes));
    const downloads = resolveRequests(server, 'Tiny-Q4_K_M.gguf');
    expect(downloads).toHaveLength(2);
    const resumedAt = Number(/^bytes=(\d+)-$/.exec(downloads[1]!.range ?? '')?.[1]);
    expect(resumedAt).toBeGreaterThan(0);
    expect(resumedAt).toBeLessThanOrEqual(1 << 20);
    expect(downloads[1]!.bytesSent).toBe(bytes.length - resumedAt);
  });

  it('keeps what arrived when the network stays down, and the next pull resumes it', async () => {
    const bytes = tinyHub.files['Tiny-Q4_K_M.gguf']!;
    let server = await withHub({ drop: { file: 'Tiny-Q4_K_M.gguf', afterBytes: 1 << 20, times: 10 } });
    const options = pullOptions(server.url, { downloadTuning: { attempts: 2, retryDelayMs: 10 } });
    const error = await failureOf(pullModels(SOURCE, ['Q4_K_M'], options));
    expect(error.message).toMatch(
      /^Tiny-Q4_K_M\.gguf: the connection (dropped|closed at \d+ of \d+ bytes) \(2 tries\); \d+ MiB of 11 MiB kept: pull again to resume$/,
    );
    const partial = path.join(repoDir(options.env), 'blobs', `${sha256(bytes)}.incomplete`);
    const kept = fs.statSync(partial).size;
    expect(kept).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(repoDir(options.env), 'snapshots'))).toBe(false);

    await server.close();
    server = await withHub();
    const pull = await pullModels(SOURCE, ['Q4_K_M'], { ...options, env: { ...options.env, HF_ENDPOINT: server.url } });
    expect(resolveRequests(server, 'Tiny-Q4_K_M.gguf').map((request) => request.range)).toEqual([`bytes=${kept}-`]);
    expect(pull.downloadedBytes).toBe(bytes.length - kept);
    expect(digestOf(pull.models[0]!.files[0]!)).toBe(sha256(bytes));
    expect(fs.existsSync(partial)).toBe(false);
  });

  it('starts over when the server ignores the range on a resume, and still checks the whole file', async () => {
    const bytes = tinyHub.files['Tiny-Q4_K_M.gguf']!;
    const server = await withHub({ drop: { file: 'Tiny-Q4_K_M.gguf', afterBytes: 1 << 20, times: 1 }, ignoreRange: true });
    const pull = await pullModels(SOURCE, ['Q4_K_M'], pullOptions(server.url));
    expect(digestOf(pull.models[0]!.files[0]!)).toBe(sha256(bytes));
  });

  it('refuses bytes that do not match the SHA-256 the hub lists, deletes them, and says so', async () => {
    const server = await withHub({ corrupt: ['Tiny-Q4_K_M.gguf'] });
    const options = pullOptions(server.url);
    const error = await failureOf(pullModels(SOURCE, ['Q4_K_M'], options));
    expect(error.message).toContain("Tiny-Q4_K_M.gguf: the downloaded bytes do not match the hub's SHA-256");
    expect(error.message).toContain('the download was deleted');
    expect(fs.readdirSync(path.join(repoDir(options.env), 'blobs'))).toEqual([]);
    expect(fs.existsSync(path.join(repoDir(options.env), 'snapshots'))).toBe(false);
    expect(await cachedModels(SOURCE, 'all', options.env)).toEqual([]);
  });

  it('names what to do for a gated model, pulls it with an accepted token, and never sends the token to the CDN', async () => {
    const server = await withHub({ redirectToCdn: true }, { gatedFor: ['hf_accepted'] });
    const refused = await failureOf(pullModels(SOURCE, ['Q4_K_M'], pullOptions(server.url)));
    expect(refused.code).toBe(ErrorCode.Forbidden);
    expect(refused.message).toBe(
      `${REPO} is a gated model: accept its licence at ${server.url}/${REPO}, then set HF_TOKEN to a token of that account (https://huggingface.co/settings/tokens)`,
    );

    const pull = await pullModels(SOURCE, ['Q4_K_M'], pullOptions(server.url, { env: { HF_TOKEN: 'hf_accepted' } }));
    expect(digestOf(pull.models[0]!.files[0]!)).toBe(sha256(tinyHub.files['Tiny-Q4_K_M.gguf']!));
    const cdn = server.requests.filter((request) => request.origin === 'cdn');
    expect(cdn.length).toBeGreaterThan(0);
    expect(cdn.map((request) => request.authorization)).toEqual(cdn.map(() => null));
  });

  it('names the quantizations a repository has when the request names none or a missing one', async () => {
    const server = await withHub();
    const none = await failureOf(pullModels(SOURCE, [], pullOptions(server.url)));
    expect(none.code).toBe(ErrorCode.Usage);
    expect(none.message).toBe(
      `${SOURCE} has 4 files to pull (F16, mmproj-Tiny-F16, F32, Q4_K_M): name the ones to pull with --quants, or --quants all`,
    );
    const missing = await failureOf(pullModels(SOURCE, ['Q8_0'], pullOptions(server.url)));
    expect(missing.code).toBe(ErrorCode.NotFound);
    expect(missing.message).toBe(`${SOURCE} has no Q8_0; it has F16, mmproj-Tiny-F16, F32, Q4_K_M`);
    const unknown = await failureOf(pullModels('hf:nobody/Nothing-GGUF', ['Q8_0'], pullOptions(server.url)));
    expect(unknown.message).toMatch(/^no model repository nobody\/Nothing-GGUF at http:\/\/127\.0\.0\.1:\d+: check the name/);
    expect(server.requests.filter((request) => request.path.includes('/resolve/'))).toEqual([]);
  });

  it('checks the free space before it downloads anything', async () => {
    const server = await withHub({}, { listedAs: { 'Tiny-Q4_K_M.gguf': { size: 2 ** 50 } } });
    const options = pullOptions(server.url);
    const error = await failureOf(pullModels(SOURCE, ['Q4_K_M'], options));
    expect(error.code).toBe(ErrorCode.StorageFailed);
    expect(error.message).toMatch(
      new RegExp(
        `^not enough disk space: the pull needs 1048576\\.0 GiB more and ${hubCacheDir(options.env)} has .* free; free space, or set HF_HUB_CACHE to a disk with room$`,
      ),
    );
    expect(server.requests.filter((request) => request.path.includes('/resolve/'))).toEqual([]);
  });

  it.skipIf(!fs.existsSync('/dev/full'))(
    'says the disk is full when a write fails for space (a partial file that is /dev/full)',
    async () => {
      const bytes = tinyHub.files['Tiny-Q4_K_M.gguf']!;
      const server = await withHub();
      const options = pullOptions(server.url);
      const blobs = path.join(repoDir(options.env), 'blobs');
      fs.mkdirSync(blobs, { recursive: true });
      fs.symlinkSync('/dev/full', path.join(blobs, `${sha256(bytes)}.incomplete`));
      const error = await failureOf(pullModels(SOURCE, ['Q4_K_M'], options));
      expect(error.code).toBe(ErrorCode.StorageFailed);
      expect(error.message).toMatch(
        /^the disk is full: Tiny-Q4_K_M\.gguf stopped at 0 MiB of \d+ MiB in .*\.incomplete; free space and pull again to resume/,
      );
    },
  );

  it('stops on cancel: a cancel from a face deletes the file in progress, an interrupt keeps it to resume', async () => {
    const bytes = tinyHub.files['Tiny-Q4_K_M.gguf']!;
    const server = await withHub({ bytesPerSecond: 4 << 20 });
    for (const discard of [true, false]) {
      const controller = new AbortController();
      const progress: PullProgress[] = [];
      const options = pullOptions(server.url, {
        signal: controller.signal,
        discardPartialOnCancel: discard,
        onProgress: (step) => {
          progress.push(step);
          if (step.fileBytesDone >= 256 * 1024) controller.abort();
        },
      });
      const error = await failureOf(pullModels(SOURCE, ['Q4_K_M'], options));
      expect(error.message).toContain(
        discard ? 'was cancelled; the file being downloaded was deleted' : 'Tiny-Q4_K_M.gguf is kept in part: pull again to resume',
      );
      const partial = path.join(repoDir(options.env), 'blobs', `${sha256(bytes)}.incomplete`);
      expect(fs.existsSync(partial)).toBe(!discard);
      expect(fs.existsSync(path.join(repoDir(options.env), 'snapshots'))).toBe(false);
      expect(progress.at(-1)!.bytesDone).toBeLessThan(bytes.length);
    }
  });

  it('lets one pull at a time download a file: a second is refused naming the first, a claim left by an exited process is taken over', async () => {
    const bytes = tinyHub.files['Tiny-Q4_K_M.gguf']!;
    const server = await withHub({ bytesPerSecond: 4 << 20 });
    const options = pullOptions(server.url);
    const partial = path.join(repoDir(options.env), 'blobs', `${sha256(bytes)}.incomplete`);
    let started!: () => void;
    const downloading = new Promise<void>((resolve) => (started = resolve));
    const first = pullModels(SOURCE, ['Q4_K_M'], { ...options, onProgress: (step) => step.fileBytesDone > 0 && started() });
    await downloading;
    const second = await failureOf(pullModels(SOURCE, ['Q4_K_M'], options));
    expect(second.message).toBe(
      `Tiny-Q4_K_M.gguf is being downloaded by another pull (process ${process.pid}): wait for it to finish, then pull again (the file will be in the cache); if no pull is running, delete ${partial}.lock`,
    );
    const done = await first;
    expect(digestOf(done.models[0]!.files[0]!)).toBe(sha256(bytes));
    expect(fs.existsSync(`${partial}.lock`)).toBe(false);

    // A pull killed mid-file leaves its claim; the next pull sees its process gone and takes the file over.
    const exited = spawnSync('true');
    const fresh = pullOptions(server.url);
    const stalePartial = path.join(repoDir(fresh.env), 'blobs', `${sha256(bytes)}.incomplete`);
    fs.mkdirSync(path.dirname(stalePartial), { recursive: true });
    fs.writeFileSync(`${stalePartial}.lock`, JSON.stringify({ pid: exited.pid, startTicks: null }));
    const resumed = await pullModels(SOURCE, ['Q4_K_M'], fresh);
    expect(digestOf(resumed.models[0]!.files[0]!)).toBe(sha256(bytes));
    expect(fs.existsSync(`${stalePartial}.lock`)).toBe(false);
  }, 30_000);

  it('refuses a listing whose paths or digests would name files outside the cache (a hostile mirror)', async () => {
    const escaping = { ...tinyHub.files, '../../escaped-Q8_0.gguf': tinyHub.files['Tiny-Q4_K_M.gguf']! };
    const escapingHub = await withHub({}, { files: escaping });
    const options = pullOptions(escapingHub.url);
    const byPath = await failureOf(pullModels(SOURCE, ['Q8_0'], options));
    expect(byPath.message).toBe(
      `${SOURCE} lists a file named "../../escaped-Q8_0.gguf", which is not a plain relative path; nothing was written`,
    );
    await escapingHub.close();

    const digestHub = await withHub({}, { listedAs: { 'Tiny-Q4_K_M.gguf': { sha256: '../../../escaped' } } });
    const byDigest = await failureOf(pullModels(SOURCE, ['Q4_K_M'], { ...options, env: { ...options.env, HF_ENDPOINT: digestHub.url } }));
    expect(byDigest.message).toBe(
      `${SOURCE} lists Tiny-Q4_K_M.gguf without a SHA-256 (an LFS oid) to check the download against; nothing was written`,
    );
    expect(fs.existsSync(hubCacheDir(options.env))).toBe(false);
    expect(fs.existsSync(path.resolve(hubCacheDir(options.env), '..', 'escaped'))).toBe(false);
  });

  it('says the hub cannot be reached, naming the endpoint', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
    await new Promise((resolve) => server.close(resolve));
    const error = await failureOf(pullModels(SOURCE, ['Q4_K_M'], pullOptions(url)));
    expect(error.message).toBe(
      `cannot reach the hub at ${url} (ECONNREFUSED): check the network connection, or set HF_ENDPOINT to a mirror you can reach`,
    );
  });
});
