import type { ModelEntry } from '../../../shared/contract/models';
import type { ServerPurpose } from '../../../shared/contract/server';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import type { ManagedEngineAdapter } from '../engine-adapter';

/**
 * llama-server started for what its workload asks, the flags landing in the argv the run records:
 * - tool calls: `--jinja`, so the model's own chat template renders the tools and the server
 *   parses the calls out of the answer into `tool_calls` (the pinned build has it on by default;
 *   others may not, and without it the tools are silently dropped).
 * - embeddings: `--embeddings`, and mean pooling where the model declares no pooling of its own
 *   (no pooling_type, or 0, "none"). A generative model (the demo models, any chat model) declares none, and
 *   llama-server then pools nothing and refuses the OpenAI-style endpoint ("Pooling type 'none'
 *   is not OAI compatible"); an embedding model's own pooling (CLS for BERT-style models,
 *   last-token for others) is what it was trained with, so it is kept.
 * - rerank: `--reranking`, on a model with a ranking head only; any other is refused before
 *   anything starts, since its server would answer every request 501 or score with no head.
 */
export function servingPurpose(
  adapter: ManagedEngineAdapter,
  purpose: Exclude<ServerPurpose, 'generation'>,
  model: ModelEntry,
): ManagedEngineAdapter {
  if (purpose === 'rerank' && !model.rankingHead)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${model.path} has no ranking head (no rank pooling in its header, no cls tensors): reranking needs a reranker model (a cross-encoder converted to GGUF with its classifier, such as a bge-reranker); this model can run the embeddings workload instead`,
    );
  // llama.h: 0 none, 1 mean, 2 CLS, 3 last, 4 rank.
  const declared = model.poolingType ?? null;
  const flags =
    purpose === 'tool-calls'
      ? ['--jinja']
      : purpose === 'rerank'
        ? ['--reranking']
        : ['--embeddings', ...(declared === null || declared === 0 ? ['--pooling', 'mean'] : [])];
  return {
    ...adapter,
    launch: (input) => {
      const launch = adapter.launch(input);
      return { ...launch, args: [...launch.args, ...flags] };
    },
  };
}
