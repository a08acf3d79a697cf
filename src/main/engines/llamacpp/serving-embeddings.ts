import type { ManagedEngineAdapter } from '../engine-adapter';

/**
 * llama-server started for /v1/embeddings: `--embeddings`, and mean pooling where the model
 * declares no pooling of its own. A generative model (the demo models, any chat model) declares
 * none, and llama-server then pools nothing and refuses the OpenAI-style endpoint ("Pooling type
 * 'none' is not OAI compatible"); an embedding model's own pooling (CLS for BERT-style models,
 * last-token for others) is what it was trained with, so it is kept. The flags land in the argv
 * the run records.
 */
export function servingEmbeddings(adapter: ManagedEngineAdapter, declaredPooling: number | null): ManagedEngineAdapter {
  // llama.h: 0 none, 1 mean, 2 CLS, 3 last, 4 rank.
  const pooling = declaredPooling === null || declaredPooling === 0 ? ['--pooling', 'mean'] : [];
  return {
    ...adapter,
    launch: (input) => {
      const launch = adapter.launch(input);
      return { ...launch, args: [...launch.args, '--embeddings', ...pooling] };
    },
  };
}
