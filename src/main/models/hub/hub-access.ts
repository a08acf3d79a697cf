import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';

/** A model repository on the Hugging Face hub (or a mirror), as `hf:OWNER/REPO[@REVISION]` names it. */
export interface HubRepoRef {
  repo: string;
  revision: string;
}

const REPO_NAME = /^[A-Za-z0-9][\w.-]{0,95}\/[A-Za-z0-9][\w.-]{0,95}$/;
/**
 * A branch, tag or commit as git allows them and the hub serves them: parts of word
 * characters, dots and dashes between single slashes, none starting with a dot (so no `..`),
 * no slash first or last (`refs/pr/3`, `v1.0`, a 40-hex commit). The revision goes into the
 * hub's paths (encoded as one segment) and names a folder of the cache.
 */
const REVISION = /^(?=.{1,200}$)[\w-][\w.-]*(\/[\w-][\w.-]*)*$/;

export function isHubRef(text: string): boolean {
  return text.startsWith('hf:');
}

export function parseHubRef(text: string): HubRepoRef {
  const body = text.replace(/^hf:/, '');
  const at = body.indexOf('@');
  const repo = at === -1 ? body : body.slice(0, at);
  const revision = at === -1 ? 'main' : body.slice(at + 1);
  if (!REPO_NAME.test(repo) || repo.includes('..'))
    throw new AppError(
      ErrorCode.Usage,
      `"${text}" is not a hub model name: write hf:OWNER/REPO or hf:OWNER/REPO@REVISION (e.g. hf:Qwen/Qwen3-8B-GGUF)`,
    );
  if (!REVISION.test(revision) || revision.includes('..'))
    throw new AppError(
      ErrorCode.Usage,
      `"${text}": ${JSON.stringify(revision)} is not a revision name: write a branch, tag or commit after the @ ` +
        `(letters, digits, "_", "-" and "." in parts joined by single "/", no part starting with "."; e.g. main, v1.0, refs/pr/3)`,
    );
  return { repo, revision };
}

/** Where the hub is: HF_ENDPOINT (a mirror or a local stand-in) or huggingface.co. */
export function hubEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  const endpoint = (env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
  try {
    const url = new URL(endpoint);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(url.protocol);
  } catch {
    throw new AppError(
      ErrorCode.Usage,
      `HF_ENDPOINT "${endpoint}" is not an http(s) URL: unset it, or set it to a mirror such as https://hf-mirror.com`,
    );
  }
  return endpoint;
}

/** The user's token, as the hub's own tools find it: HF_TOKEN, then the token file (HF_TOKEN_PATH, else HF_HOME/token). */
export function hubToken(env: NodeJS.ProcessEnv = process.env): string | null {
  const fromEnv = env.HF_TOKEN ?? env.HUGGING_FACE_HUB_TOKEN;
  if (fromEnv?.trim()) return fromEnv.trim();
  const home = env.HF_HOME ?? path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'huggingface');
  try {
    const token = fs.readFileSync(env.HF_TOKEN_PATH ?? path.join(home, 'token'), 'utf8').trim();
    return token || null;
  } catch {
    return null;
  }
}

/** What the hub's answer means for the user, and what to do about it. */
export function hubFailure(
  ref: HubRepoRef,
  endpoint: string,
  status: number,
  errorCode: string | null,
  message: string,
  what: string,
): AppError {
  const page = `${endpoint}/${ref.repo}`;
  if (errorCode === 'GatedRepo' || (status === 403 && /gated|restricted|access/i.test(message)))
    return new AppError(
      ErrorCode.Forbidden,
      `${ref.repo} is a gated model: accept its licence at ${page}, then set HF_TOKEN to a token of that account (https://huggingface.co/settings/tokens)`,
    );
  if (errorCode === 'RevisionNotFound')
    return new AppError(
      ErrorCode.NotFound,
      `${ref.repo} has no revision "${ref.revision}": name a branch, tag or commit that exists (see ${page})`,
    );
  if (errorCode === 'EntryNotFound' || (status === 404 && errorCode !== 'RepoNotFound' && what !== 'the file list'))
    return new AppError(
      ErrorCode.NotFound,
      `${ref.repo}@${ref.revision} has no file ${what}: list its files at ${page}/tree/${encodeURIComponent(ref.revision)}`,
    );
  if (status === 401 || status === 404)
    return new AppError(
      ErrorCode.NotFound,
      `no model repository ${ref.repo} at ${endpoint}: check the name (OWNER/REPO as in its URL); a private repository needs HF_TOKEN`,
    );
  if (status === 403)
    return new AppError(ErrorCode.Forbidden, `the hub refused ${what} of ${ref.repo} (403: ${message}): check HF_TOKEN's permissions`);
  if (status === 429)
    return new AppError(
      ErrorCode.RequestFailed,
      `the hub is rate-limiting requests (429): wait a minute, or set HF_TOKEN (signed-in limits are higher)`,
    );
  return new AppError(ErrorCode.RequestFailed, `the hub answered ${status} for ${what} of ${ref.repo}: ${message}`);
}

/** A fetch that never reached the hub: DNS, refused connection, timeout. */
export function hubUnreachable(endpoint: string, error: unknown): AppError {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (error as Error).message;
  return new AppError(
    ErrorCode.RequestFailed,
    `cannot reach the hub at ${endpoint} (${why}): check the network connection, or set HF_ENDPOINT to a mirror you can reach`,
  );
}
