import { listModels } from '@huggingface/hub';
import type { HubModelMatch } from '../../../shared/contract/models';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { hubUnreachable } from './hub-access';
import { openHubSession, type HubOptions } from './hub-files';

/** Enough to choose from; a user who wants more types a longer name. */
export const SEARCH_LIMIT = 30;

/**
 * Repositories on the hub (or HF_ENDPOINT's mirror) whose name holds `query` and that carry
 * GGUF files (the hub's `gguf` tag), most downloaded first: a name typed into "Get models"
 * becomes an `hf:OWNER/REPO` to plan.
 */
export async function searchHubModels(query: string, options: HubOptions & { limit?: number } = {}): Promise<HubModelMatch[]> {
  const words = query.trim();
  if (words.length < 2 || words.length > 200)
    throw new AppError(ErrorCode.Usage, `search for a model by 2 to 200 characters of its name, e.g. "qwen3 8b" (got "${words}")`);
  const session = openHubSession(options);
  const matches: HubModelMatch[] = [];
  try {
    for await (const model of listModels({
      search: { query: words, tags: ['gguf'] },
      sort: 'downloads',
      limit: options.limit ?? SEARCH_LIMIT,
      hubUrl: session.endpoint,
      fetch: session.fetch,
    })) {
      matches.push({
        source: `hf:${model.name}`,
        downloads: model.downloads ?? 0,
        likes: model.likes ?? 0,
        gated: Boolean(model.gated),
        updatedAt: Number.isNaN(model.updatedAt.getTime()) ? null : model.updatedAt.toISOString(),
      });
    }
  } catch (error) {
    throw searchFailure(session.endpoint, error);
  }
  return matches;
}

function searchFailure(endpoint: string, error: unknown): Error {
  if (error instanceof Error && error.name === 'AbortError') return error;
  const status = (error as { statusCode?: number }).statusCode;
  if (status === 429)
    return new AppError(
      ErrorCode.RequestFailed,
      'the hub is rate-limiting searches (429): wait a minute, or set HF_TOKEN (signed-in limits are higher)',
    );
  if (typeof status === 'number')
    return new AppError(
      ErrorCode.RequestFailed,
      `the hub at ${endpoint} answered ${status} to the model search: type the repository as hf:OWNER/REPO instead, or try again later`,
    );
  return hubUnreachable(endpoint, error);
}
