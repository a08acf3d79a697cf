import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { GGUFValueType } from '@huggingface/gguf';
import { afterEach, beforeAll } from 'vitest';
import { writeSyntheticProjector } from '../../src/main/models/synthetic-projector';
import { DEMO_MODEL_SHAPE } from '../../src/main/models/synthetic-model';
import {
  encodeGgufHeader,
  GgmlType,
  tensorByteLength,
  writeGgufFile,
  type GgufEntry,
  type GgufTensor,
} from '../../src/main/models/gguf-writer';

/**
 * TEST STAND-IN for the Hugging Face hub, on a local port (this machine cannot reach the real
 * hub). It answers the routes Infer Lab calls, shaped as the hub documents them, not captured:
 * - GET /api/models/OWNER/REPO/tree/REV?recursive=true: the file list, `pageSize` entries per
 *   page with a `Link: <…>; rel="next"` header; LFS entries carry `lfs.oid` (the SHA-256);
 * - GET /api/models/OWNER/REPO/revision/REV: the model's information, `sha` its commit;
 * - GET /api/models?search=WORDS&filter=gguf&sort=downloads&limit=N: the repositories whose
 *   name holds every word (any case) and that have a .gguf file, most downloaded first;
 * - GET /OWNER/REPO/resolve/REV/PATH: the file, honouring `Range: bytes=A-B` (and `A-`) with a
 *   206, with `X-Repo-Commit`, `ETag` and, for LFS files, `X-Linked-Etag`/`X-Linked-Size`;
 * a revision is `main` or the repository's commit. Errors as the hub gives them: 401 + `X-Error-Code: RepoNotFound` for an unknown repository,
 * 404 + `RevisionNotFound` / `EntryNotFound`, 401/403 + `GatedRepo` for a gated one without an
 * accepted token. Faults for the tests: resolve redirects to a second origin (a CDN), a
 * server that ignores ranges, a next-page link to another origin, a connection dropped partway
 * through a file, bytes altered on the way, a slow link, a listing that lies about paths,
 * digests or sizes.
 */
export interface StandInRepo {
  files: Record<string, Buffer>;
  /** Only these tokens may read the files; a request without one gets 401, with another 403. */
  gatedFor?: string[];
  /** For the search's order (most downloaded first). */
  downloads?: number;
  /** What the listing says instead of the truth, per path: a hostile or broken mirror. */
  listedAs?: Record<string, { sha256?: string; size?: number }>;
}

/** The commit every stand-in repository is at. */
export const STAND_IN_COMMIT = '0123456789abcdef0123456789abcdef01234567';

export interface StandInHubOptions {
  repos: Record<string, StandInRepo>;
  pageSize?: number;
  /** Resolve answers 302 to the CDN origin, as the hub does for large files. */
  redirectToCdn?: boolean;
  /** Answer ranged reads with the whole file (200), as a misconfigured proxy might. */
  ignoreRange?: boolean;
  /** The second page of a listing is linked on the CDN origin (another host). */
  nextPageElsewhere?: boolean;
  /** The first `times` downloads of a file (by path) send `afterBytes` bytes of it, then drop the connection. */
  drop?: { file: string; afterBytes: number; times: number };
  /** Files whose bytes are altered in flight (one byte flipped in the middle). */
  corrupt?: string[];
  /** Sends file bodies at about this rate, in 64 KiB pieces, so a test can act while a download runs. */
  bytesPerSecond?: number;
}

export interface HubRequest {
  origin: 'hub' | 'cdn';
  path: string;
  authorization: string | null;
  range: string | null;
  bytesSent: number;
}

export interface StandInHub {
  url: string;
  requests: HubRequest[];
  /** The link's rate for downloads that start from now on (null: full speed); those already sending keep theirs. */
  setBytesPerSecond(rate: number | null): void;
  close(): Promise<void>;
}

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

function error(response: http.ServerResponse, status: number, code: string, message: string): number {
  response.writeHead(status, { 'content-type': 'application/json', 'x-error-code': code });
  response.end(JSON.stringify({ error: message }));
  return 0;
}

interface BodyFaults {
  ignoreRange: boolean;
  /** Bytes of the body to send before destroying the socket; null sends it all. */
  dropAfter: number | null;
  bytesPerSecond: number | null;
}

/** Writes a body in pieces, at a rate when asked, and cuts the connection where a fault says so. */
function writeBody(response: http.ServerResponse, body: Buffer, faults: BodyFaults): number {
  const limit = faults.dropAfter === null ? body.length : Math.min(body.length, faults.dropAfter);
  if (faults.bytesPerSecond === null && faults.dropAfter === null) {
    response.end(body);
    return body.length;
  }
  const piece = 64 * 1024;
  let sent = 0;
  const next = () => {
    if (response.destroyed) return;
    if (sent >= limit) {
      if (faults.dropAfter !== null && limit < body.length) response.socket?.destroy();
      else response.end();
      return;
    }
    const end = Math.min(limit, sent + piece);
    response.write(body.subarray(sent, end));
    sent = end;
    setTimeout(next, faults.bytesPerSecond === null ? 0 : (piece / faults.bytesPerSecond) * 1000);
  };
  next();
  return limit;
}

function sendFile(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  bytes: Buffer,
  faults: BodyFaults,
  headers: Record<string, string>,
): number {
  const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
  if (!range || faults.ignoreRange) {
    response.writeHead(200, { ...headers, 'content-length': bytes.length, 'accept-ranges': 'bytes' });
    return writeBody(response, bytes, faults);
  }
  const start = Number(range[1]);
  const end = Math.min(bytes.length - 1, range[2] ? Number(range[2]) : bytes.length - 1);
  if (start >= bytes.length) {
    response.writeHead(416, { 'content-range': `bytes */${bytes.length}` });
    response.end();
    return 0;
  }
  const slice = bytes.subarray(start, end + 1);
  response.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${bytes.length}`, 'content-length': slice.length });
  return writeBody(response, slice, faults);
}

export async function startStandInHub(options: StandInHubOptions): Promise<StandInHub> {
  const requests: HubRequest[] = [];
  const pageSize = options.pageSize ?? 1000;
  let dropsLeft = options.drop?.times ?? 0;
  let bytesPerSecond = options.bytesPerSecond ?? null;
  const served = (filePath: string, bytes: Buffer): Buffer => {
    if (!options.corrupt?.includes(filePath)) return bytes;
    const altered = Buffer.from(bytes);
    altered[altered.length >> 1]! ^= 0xff;
    return altered;
  };
  const faultsFor = (filePath: string): BodyFaults => {
    const drop = options.drop?.file === filePath && dropsLeft > 0;
    if (drop) dropsLeft--;
    return {
      ignoreRange: Boolean(options.ignoreRange),
      dropAfter: drop ? options.drop!.afterBytes : null,
      bytesPerSecond,
    };
  };
  let hubUrl = '';
  let cdnUrl = '';

  function treePage(repoName: string, repo: StandInRepo, cursor: number, response: http.ServerResponse): number {
    const entries = Object.entries(repo.files).map(([filePath, bytes]) => {
      const lfs = filePath.endsWith('.gguf');
      const listed = repo.listedAs?.[filePath] ?? {};
      const sha256 = listed.sha256 ?? crypto.createHash('sha256').update(bytes).digest('hex');
      return {
        type: 'file',
        oid: crypto.createHash('sha1').update(bytes).digest('hex'),
        size: lfs ? 134 : (listed.size ?? bytes.length),
        path: filePath,
        ...(lfs ? { lfs: { oid: sha256, size: listed.size ?? bytes.length, pointerSize: 134 } } : {}),
      };
    });
    const page = entries.slice(cursor, cursor + pageSize);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (cursor + pageSize < entries.length) {
      const base = options.nextPageElsewhere ? cdnUrl : hubUrl;
      headers.link = `<${base}/api/models/${repoName}/tree/main?recursive=true&cursor=${cursor + pageSize}>; rel="next"`;
    }
    response.writeHead(200, headers);
    response.end(JSON.stringify(page));
    return 0;
  }

  function searchPage(params: URLSearchParams, response: http.ServerResponse): number {
    const words = (params.get('search') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const wantsGguf = params.getAll('filter').includes('gguf');
    const found = Object.entries(options.repos)
      .filter(([name]) => words.every((word) => name.toLowerCase().includes(word)))
      .filter(([, repo]) => !wantsGguf || Object.keys(repo.files).some((file) => file.endsWith('.gguf')))
      .sort(([, a], [, b]) => (b.downloads ?? 0) - (a.downloads ?? 0))
      .slice(0, Number(params.get('limit') ?? 1000))
      .map(([name, repo]) => ({
        _id: `stand-in-${name}`,
        id: name,
        private: false,
        gated: repo.gatedFor ? 'manual' : false,
        downloads: repo.downloads ?? 0,
        likes: 0,
        lastModified: '2026-01-01T00:00:00.000Z',
      }));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(found));
    return 0;
  }

  function handle(origin: 'hub' | 'cdn', request: http.IncomingMessage, response: http.ServerResponse): number {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    if (origin === 'cdn' && url.pathname.startsWith('/blobs/')) {
      const [, , owner, name, ...rest] = decodeURIComponent(url.pathname).split('/');
      const filePath = rest.join('/');
      const bytes = options.repos[`${owner}/${name}`]?.files[filePath];
      if (!bytes) return error(response, 404, 'EntryNotFound', 'Entry not found');
      return sendFile(request, response, served(filePath, bytes), faultsFor(filePath), {});
    }
    if (url.pathname === '/api/models') return searchPage(url.searchParams, response);
    const tree = /^\/api\/models\/([^/]+\/[^/]+)\/tree\/([^/]+)$/.exec(url.pathname);
    const info = /^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/.exec(url.pathname);
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(url.pathname);
    const route = tree ?? info ?? resolve;
    const repoName = decodeURIComponent(route?.[1] ?? '');
    const repo = options.repos[repoName];
    if (!route) return error(response, 404, 'NotFound', 'Not found');
    if (!repo) return error(response, 401, 'RepoNotFound', 'Repository not found');
    if (!['main', STAND_IN_COMMIT].includes(decodeURIComponent(route[2]!)))
      return error(response, 404, 'RevisionNotFound', 'Invalid rev id');
    if (tree) return treePage(repoName, repo, Number(url.searchParams.get('cursor') ?? 0), response);
    if (info) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          _id: 'stand-in',
          id: repoName,
          sha: STAND_IN_COMMIT,
          private: false,
          gated: repo.gatedFor ? 'manual' : false,
          downloads: 0,
          likes: 0,
          lastModified: '2026-01-01T00:00:00.000Z',
          tags: ['gguf'],
        }),
      );
      return 0;
    }
    const token = request.headers.authorization?.replace(/^Bearer /, '') ?? null;
    if (repo.gatedFor && !token)
      return error(
        response,
        401,
        'GatedRepo',
        `Access to model ${repoName} is restricted. You must have access to it and be authenticated to access it. Please log in.`,
      );
    if (repo.gatedFor && !repo.gatedFor.includes(token!))
      return error(response, 403, 'GatedRepo', `Access to model ${repoName} is restricted and you are not in the authorized list.`);
    const filePath = decodeURIComponent(resolve![3]!);
    const bytes = repo.files[filePath];
    if (!bytes) return error(response, 404, 'EntryNotFound', `${filePath} does not exist on "main"`);
    const sha256 = crypto.createHash('sha256').update(bytes).digest('hex');
    const headers: Record<string, string> = {
      'x-repo-commit': STAND_IN_COMMIT,
      etag: `"${sha256}"`,
      ...(filePath.endsWith('.gguf') ? { 'x-linked-etag': `"${sha256}"`, 'x-linked-size': String(bytes.length) } : {}),
    };
    if (options.redirectToCdn) {
      response.writeHead(302, { ...headers, location: `${cdnUrl}/blobs/${repoName}/${filePath}` });
      response.end();
      return 0;
    }
    return sendFile(request, response, served(filePath, bytes), faultsFor(filePath), headers);
  }

  const serverFor = (origin: 'hub' | 'cdn') =>
    http.createServer((request, response) => {
      const bytesSent = handle(origin, request, response);
      requests.push({
        origin,
        path: request.url ?? '',
        authorization: request.headers.authorization ?? null,
        range: request.headers.range ?? null,
        bytesSent,
      });
    });
  const hub = serverFor('hub');
  const cdn = serverFor('cdn');
  hubUrl = await listen(hub);
  cdnUrl = await listen(cdn);
  return {
    url: hubUrl,
    requests,
    setBytesPerSecond: (rate) => (bytesPerSecond = rate),
    close: async () => {
      hub.closeAllConnections();
      cdn.closeAllConnections();
      await Promise.all([new Promise((resolve) => hub.close(resolve)), new Promise((resolve) => cdn.close(resolve))]);
    },
  };
}

/**
 * Constructed models: a llama-shaped GGUF with a 2,000-token vocabulary and 4 blocks whose
 * feed-forward tensors make each file several MiB, so a header read is a small part of it.
 */
function modelFile(
  dir: string,
  name: string,
  type: GgmlType,
  blocks: readonly number[],
  withMetadata = true,
  split?: { no: number; count: number },
): Buffer {
  const bytesPer = type === GgmlType.F32 ? 4 : 2;
  const tensor = (tensorName: string, shape: number[]): GgufTensor => ({
    name: tensorName,
    shape,
    type,
    data: () => new Uint8Array(shape.reduce((a, b) => a * b, 1) * bytesPer),
  });
  const u32 = (key: string, value: number): GgufEntry => ({ key, type: GGUFValueType.UINT32, value });
  const entries: GgufEntry[] = withMetadata
    ? [
        { key: 'general.architecture', type: GGUFValueType.STRING, value: 'llama' },
        u32('llama.block_count', 4),
        u32('llama.embedding_length', 256),
        u32('llama.feed_forward_length', 2048),
        u32('llama.attention.head_count', 4),
        u32('llama.attention.head_count_kv', 2),
        u32('llama.context_length', 8192),
        {
          key: 'tokenizer.ggml.tokens',
          type: GGUFValueType.ARRAY,
          itemType: GGUFValueType.STRING,
          value: Array.from({ length: 2000 }, (_, i) => `token${i}`),
        },
      ]
    : [];
  if (split) entries.push(u32('split.no', split.no), u32('split.count', split.count));
  const tensors: GgufTensor[] = [];
  if (withMetadata) tensors.push(tensor('token_embd.weight', [256, 2000]), tensor('output.weight', [256, 2000]));
  for (const block of blocks)
    tensors.push(
      tensor(`blk.${block}.attn_q.weight`, [256, 256]),
      tensor(`blk.${block}.attn_k.weight`, [256, 128]),
      tensor(`blk.${block}.attn_v.weight`, [256, 128]),
      tensor(`blk.${block}.ffn_up.weight`, [256, 2048]),
      tensor(`blk.${block}.ffn_down.weight`, [2048, 256]),
    );
  const file = path.join(dir, name.replace(/\//g, '_'));
  writeGgufFile(file, entries, tensors);
  return fs.readFileSync(file);
}

/** The demo projector's layout for a model of this width (constructed). */
function projectorFile(dir: string, embeddingLength: number): Buffer {
  const file = path.join(dir, 'mmproj.gguf');
  writeSyntheticProjector(file, { ...DEMO_MODEL_SHAPE, embeddingLength });
  return fs.readFileSync(file);
}

/** The files of a constructed repository: F32 and Q4_K_M-named single files, an F16 split in two, a projector and a README. */
export function tinyGgufRepoFiles(): Record<string, Buffer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-hub-'));
  try {
    return {
      'README.md': Buffer.from('# a model\n'),
      'Tiny-F32.gguf': modelFile(dir, 'Tiny-F32.gguf', GgmlType.F32, [0, 1, 2, 3]),
      'Tiny-Q4_K_M.gguf': modelFile(dir, 'Tiny-Q4_K_M.gguf', GgmlType.F16, [0, 1, 2, 3]),
      'F16/Tiny-F16-00001-of-00002.gguf': modelFile(dir, 'F16/Tiny-F16-00001-of-00002.gguf', GgmlType.F16, [0, 1], true, {
        no: 0,
        count: 2,
      }),
      'F16/Tiny-F16-00002-of-00002.gguf': modelFile(dir, 'F16/Tiny-F16-00002-of-00002.gguf', GgmlType.F16, [2, 3], false, {
        no: 1,
        count: 2,
      }),
      'mmproj-Tiny-F16.gguf': projectorFile(dir, 256),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A constructed llama far too large for any machine (4 blocks with 256 GiB feed-forward
 * tensors): only its header is served, and the listing gives the size its tensors would take,
 * so a plan reads it and finds it fits nowhere.
 */
export function oversizedModel(): { bytes: Buffer; listedSize: number } {
  const u32 = (key: string, value: number): GgufEntry => ({ key, type: GGUFValueType.UINT32, value });
  const width = 262_144;
  const tensors: GgufTensor[] = [0, 1, 2, 3].flatMap((block) =>
    (['ffn_up', 'ffn_down'] as const).map((name) => ({
      name: `blk.${block}.${name}.weight`,
      shape: [width, width],
      type: GgmlType.F32,
      data: () => new Uint8Array(0),
    })),
  );
  const { header } = encodeGgufHeader(
    [
      { key: 'general.architecture', type: GGUFValueType.STRING, value: 'llama' },
      u32('llama.block_count', 4),
      u32('llama.embedding_length', width),
      u32('llama.feed_forward_length', width),
      u32('llama.attention.head_count', 64),
      u32('llama.attention.head_count_kv', 8),
      u32('llama.context_length', 8192),
      { key: 'tokenizer.ggml.tokens', type: GGUFValueType.ARRAY, itemType: GGUFValueType.STRING, value: ['a', 'b'] },
    ],
    tensors,
  );
  return { bytes: header, listedSize: header.length + tensors.reduce((sum, tensor) => sum + tensorByteLength(tensor), 0) };
}

/**
 * For a test file: the tiny GGUF repository's files (made once), and stand-in hubs serving them
 * as `repo`, each closed after its test.
 */
export function useTinyGgufHub(repo: string) {
  let files: Record<string, Buffer> = {};
  const started: StandInHub[] = [];
  beforeAll(() => {
    files = tinyGgufRepoFiles();
  });
  afterEach(async () => {
    await Promise.allSettled(started.splice(0).map((hub) => hub.close()));
  });
  return {
    get files(): Record<string, Buffer> {
      return files;
    },
    async start(options: Omit<StandInHubOptions, 'repos'> = {}, overrides: Partial<StandInRepo> = {}): Promise<StandInHub> {
      const hub = await startStandInHub({ ...options, repos: { [repo]: { files, ...overrides } } });
      started.push(hub);
      return hub;
    },
  };
}
