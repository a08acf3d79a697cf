import path from 'node:path';
import { GGUFValueType } from '@huggingface/gguf';
import { describe, expect, it } from 'vitest';
import { buildLlamaServerArgs, defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { applySettings, validateProfile } from '../../src/main/engines/llamacpp/profile-rules';
import { GgmlType, writeGgufFile, type GgufEntry, type GgufTensor } from '../../src/main/models/gguf-writer';
import { assertLoraAdapterFits } from '../../src/main/models/lora-adapter';
import { describeModel, NOT_A_MODEL_BUT_ADAPTER, scanModels } from '../../src/main/models/model-library';
import { writeSyntheticAdapter } from '../../src/main/models/synthetic-adapter';
import { DEMO_MODEL_SHAPE } from '../../src/main/models/synthetic-model';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

const text = (key: string, value: string): GgufEntry => ({ key, type: GGUFValueType.STRING, value });
const zeros = (name: string, shape: number[]): GgufTensor => ({
  name,
  shape,
  type: GgmlType.F16,
  data: () => new Uint8Array(shape.reduce((a, b) => a * b, 1) * 2),
});

/** A constructed llama model header: one layer's query projection [512, 512] and value projection [512, 256]. */
function modelFile(dir: string, architecture = 'llama'): string {
  const file = path.join(dir, 'model.gguf');
  writeGgufFile(
    file,
    [text('general.architecture', architecture)],
    [zeros('blk.0.attn_q.weight', [512, 512]), zeros('blk.0.attn_v.weight', [512, 256])],
  );
  return file;
}

let written = 0;
function adapterFile(
  dir: string,
  tensors: GgufTensor[],
  entries: GgufEntry[] = [text('general.type', 'adapter'), text('adapter.type', 'lora')],
): string {
  const file = path.join(dir, `adapter-${(written += 1)}.gguf`);
  writeGgufFile(file, [text('general.architecture', 'llama'), ...entries], tensors);
  return file;
}

describe('a LoRA adapter on a managed llama-server', () => {
  it("is launched at its scale in the pinned build's form, and only where the profile names one", () => {
    // One argument, FILE:SCALE (common/arg.cpp of the pinned build); at 1, plain --lora.
    const profile = { ...defaultProfile(), loraAdapter: 'demo:lora', loraScale: 0.5 };
    const args = buildLlamaServerArgs('/m.gguf', 8080, profile, null, [{ path: '/adapters/a.gguf', scale: 0.5 }]);
    expect(args.slice(args.indexOf('--lora-scaled'), args.indexOf('--lora-scaled') + 2)).toEqual(['--lora-scaled', '/adapters/a.gguf:0.5']);
    const atOne = buildLlamaServerArgs('/m.gguf', 8080, profile, null, [{ path: '/a.gguf', scale: 1 }]);
    expect(atOne.slice(atOne.indexOf('--lora'), atOne.indexOf('--lora') + 2)).toEqual(['--lora', '/a.gguf']);
    expect(buildLlamaServerArgs('/m.gguf', 8080, defaultProfile(), null, []).filter((arg) => arg.startsWith('--lora'))).toEqual([]);
    // Several adapters: one flag each, in the profile's order, so each id is its place.
    const several = buildLlamaServerArgs('/m.gguf', 8080, profile, null, [
      { path: '/a.gguf', scale: 1 },
      { path: '/b.gguf', scale: 0.25 },
    ]);
    expect(several.slice(several.indexOf('--lora'))).toEqual(['--lora', '/a.gguf', '--lora-scaled', '/b.gguf:0.25']);
  });

  it('is set with --set (and llama-server names), checked, and kept out of extra flags', () => {
    expect(applySettings(defaultProfile(), ['loraAdapter=demo:lora', 'loraScale=0.25'])).toMatchObject({
      loraAdapter: 'demo:lora',
      loraScale: 0.25,
    });
    expect(applySettings(defaultProfile(), ['lora=/a.gguf', 'lora-scale=2'])).toMatchObject({ loraAdapter: '/a.gguf', loraScale: 2 });
    expect(applySettings({ ...defaultProfile(), loraAdapter: '/a.gguf' }, ['lora=none']).loraAdapter).toBeNull();
    expect(() => applySettings(defaultProfile(), ['loraScale=half'])).toThrow(/--set loraScale expects a number, got "half"/);
    const problems = (patch: object) =>
      validateProfile({ ...defaultProfile(), ...patch }).map((problem) => `${problem.field}: ${problem.message}`);
    expect(problems({ loraScale: 9 })).toEqual(['loraScale: loraScale must be a number from -4 to 4, got 9']);
    expect(problems({ loraAdapter: ' ' })).toEqual(['loraAdapter: loraAdapter must be demo:lora or a GGUF adapter path, or none']);
    expect(problems({ extraFlags: ['--lora', '/a.gguf'] })).toEqual([
      'extraFlags: --lora is set by Infer Lab; use the profile field loraAdapter',
    ]);
    expect(validateProfile({ ...defaultProfile(), loraAdapter: '/a.gguf' }, undefined, 'vllm').map((problem) => problem.message)).toContain(
      'a LoRA adapter is a llama-server setting; vllm takes its own adapter flags',
    );
  });

  it('must be made for the model: an adapter of its architecture, each pair shaped for the tensor it changes', async () => {
    const dir = tempDir();
    const model = modelFile(dir);
    const good = adapterFile(dir, [
      zeros('blk.0.attn_q.weight.lora_a', [512, 4]),
      zeros('blk.0.attn_q.weight.lora_b', [4, 512]),
      zeros('blk.0.attn_v.weight.lora_a', [512, 4]),
      zeros('blk.0.attn_v.weight.lora_b', [4, 256]),
    ]);
    expect(await assertLoraAdapterFits(good, model)).toEqual({
      rank: 4,
      alpha: null,
      targets: ['blk.0.attn_q.weight', 'blk.0.attn_v.weight'],
    });
    const refusals: [string, RegExp][] = [
      [model, /model\.gguf: not a LoRA adapter \(general\.type null, adapter\.type null\): give a GGUF adapter/],
      [adapterFile(dir, [zeros('blk.0.attn_q.weight.lora_a', [512, 4])]), /blk\.0\.attn_q\.weight has lora_a without lora_b/],
      [
        adapterFile(dir, [zeros('blk.0.attn_q.weight.lora_a', [512, 4]), zeros('blk.0.attn_q.weight.lora_b', [4, 1024])]),
        /blk\.0\.attn_q\.weight: lora_a \[512, 4\] and lora_b \[4, 1024\] do not fit the model's \[512, 512\]: an adapter for another model size/,
      ],
      [
        adapterFile(
          dir,
          [zeros('blk.7.attn_q.weight.lora_a', [512, 4]), zeros('blk.7.attn_q.weight.lora_b', [4, 512])],
          [text('general.type', 'adapter'), text('adapter.type', 'lora'), text('general.name', 'x')],
        ),
        /changes blk\.7\.attn_q\.weight, which model\.gguf does not have: an adapter for another model/,
      ],
      [adapterFile(dir, [zeros('x', [4])]), /holds no lora_a\/lora_b tensor pairs/],
      [path.join(dir, 'a,b.gguf'), /cannot take an adapter path with a comma or a colon in it/],
    ];
    for (const [file, message] of refusals) await expect(assertLoraAdapterFits(file, model), String(message)).rejects.toThrow(message);
    const other = tempDir();
    await expect(assertLoraAdapterFits(good, modelFile(other, 'qwen2'))).rejects.toThrow(
      /made for llama models, not for qwen2 \(model\.gguf\)/,
    );
  });

  it('is no model: refused as one, and left out of a scan of the folder it lies in', async () => {
    const dir = tempDir();
    const model = modelFile(dir);
    const adapter = adapterFile(dir, [zeros('blk.0.attn_q.weight.lora_a', [512, 4]), zeros('blk.0.attn_q.weight.lora_b', [4, 512])]);
    expect(await describeModel(adapter)).toMatchObject({ valid: false, invalidReason: NOT_A_MODEL_BUT_ADAPTER });
    expect((await scanModels([dir])).models.map((entry) => entry.path)).toEqual([model]);
  });

  it('the demo adapter fits the demo model shape, the same bytes from the same seed', async () => {
    const dir = tempDir();
    const model = path.join(dir, 'demo-shape.gguf');
    const { embeddingLength: d, headCount, headCountKv, blockCount } = DEMO_MODEL_SHAPE;
    const tensors: GgufTensor[] = [];
    for (let layer = 0; layer < blockCount; layer++)
      tensors.push(zeros(`blk.${layer}.attn_q.weight`, [d, d]), zeros(`blk.${layer}.attn_v.weight`, [d, (d / headCount) * headCountKv]));
    writeGgufFile(model, [text('general.architecture', 'llama')], tensors);
    const [first, second] = [path.join(dir, 'a.gguf'), path.join(dir, 'b.gguf')];
    writeSyntheticAdapter(first, DEMO_MODEL_SHAPE);
    writeSyntheticAdapter(second, DEMO_MODEL_SHAPE);
    expect(await assertLoraAdapterFits(first, model)).toMatchObject({ rank: 8, alpha: 16 });
    const fs = await import('node:fs');
    expect(fs.readFileSync(first).equals(fs.readFileSync(second))).toBe(true);
  });
});
