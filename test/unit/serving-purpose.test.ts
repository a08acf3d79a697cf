import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src/shared/contract/models';
import type { ManagedEngineAdapter } from '../../src/main/engines/engine-adapter';
import { servingPurpose } from '../../src/main/engines/llamacpp/serving-purpose';

// Only launch is read; the rest of an adapter plays no part in which flags are added.
const adapter = {
  launch: () => ({ program: 'llama-server', args: ['-m', 'model.gguf'], env: {} }),
} as unknown as ManagedEngineAdapter;
const model = (fields: Partial<ModelEntry>): ModelEntry => ({
  path: '/models/m.gguf',
  name: 'm',
  parts: ['/models/m.gguf'],
  sizeBytes: 1,
  valid: true,
  invalidReason: null,
  architecture: 'llama',
  parameterCount: 1,
  quantization: 'Q8_0',
  contextLength: 4096,
  layers: 2,
  tokenizer: 'llama',
  synthetic: false,
  source: 'file',
  ...fields,
});
const argsFor = (served: ManagedEngineAdapter) => served.launch({ modelPath: 'model.gguf', port: 1, profile: {} } as never).args;

describe('a llama-server started for tool calls, embeddings or reranking', () => {
  it('renders tools with the chat template (--jinja) for a workload that offers them, on any model', () => {
    expect(argsFor(servingPurpose(adapter, 'tool-calls', model({})))).toEqual(['-m', 'model.gguf', '--jinja']);
  });

  it("adds mean pooling only where the model declares none, and keeps an embedding model's own", () => {
    expect(argsFor(servingPurpose(adapter, 'embeddings', model({ poolingType: null })))).toEqual([
      '-m',
      'model.gguf',
      '--embeddings',
      '--pooling',
      'mean',
    ]);
    expect(argsFor(servingPurpose(adapter, 'embeddings', model({ poolingType: 0 })))).toEqual([
      '-m',
      'model.gguf',
      '--embeddings',
      '--pooling',
      'mean',
    ]);
    // CLS pooling, as a BERT-style embedding model declares it.
    expect(argsFor(servingPurpose(adapter, 'embeddings', model({ poolingType: 2 })))).toEqual(['-m', 'model.gguf', '--embeddings']);
  });

  it('reranks only on a model with a ranking head, and refuses any other before anything launches, naming the file', () => {
    expect(argsFor(servingPurpose(adapter, 'rerank', model({ rankingHead: true, poolingType: 4 })))).toEqual([
      '-m',
      'model.gguf',
      '--reranking',
    ]);
    expect(() => servingPurpose(adapter, 'rerank', model({ rankingHead: false }))).toThrow(/^\/models\/m\.gguf has no ranking head/);
    // A model description from before the field existed counts as without one.
    expect(() => servingPurpose(adapter, 'rerank', model({}))).toThrow(/no ranking head/);
  });
});
