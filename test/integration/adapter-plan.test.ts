import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelPlan, ModelPull } from '../../src/shared/contract/models';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { writeSyntheticAdapter } from '../../src/main/models/synthetic-adapter';
import { DEMO_MODEL_SHAPE } from '../../src/main/models/synthetic-model';
import { inferlab } from '../support/cli';
import { startStandInHub } from '../support/stand-in-hub';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('LoRA adapters on the hub', () => {
  it('plans a repository of adapters by range: what each is, whether it fits the base model --for names, then pulls the one that does', async () => {
    const dir = tempDir();
    // Constructed: the demo adapter, and one made the same way for a model twice as wide.
    const wide = path.join(dir, 'wide-lora.gguf');
    writeSyntheticAdapter(wide, { ...DEMO_MODEL_SHAPE, embeddingLength: DEMO_MODEL_SHAPE.embeddingLength * 2 });
    const hub = await startStandInHub({
      repos: {
        'tune/Demo-LoRA-GGUF': {
          files: {
            'README.md': Buffer.from('# adapters\n'),
            'demo-lora-F16.gguf': fs.readFileSync(await resolveModelRef('demo:lora')),
            'wide/wide-lora-F16.gguf': fs.readFileSync(wide),
          },
        },
      },
    });
    try {
      const env = { HF_ENDPOINT: hub.url, HF_HOME: tempDir(), HF_HUB_CACHE: path.join(dir, 'cache') };
      const planned = await inferlab(['models', 'plan', 'hf:tune/Demo-LoRA-GGUF', '--for', 'demo:q8_0', '--json'], env);
      expect(planned.code, planned.stderr).toBe(0);
      const plan = JSON.parse(planned.stdout) as ModelPlan;
      const byFile = new Map(plan.candidates.map((candidate) => [candidate.files[0], candidate]));
      const demo = byFile.get('demo-lora-F16.gguf')!;
      expect(demo.adapter).toEqual({
        architecture: 'llama',
        rank: 8,
        alpha: 16,
        targets: expect.arrayContaining(['blk.0.attn_q.weight', 'blk.3.attn_v.weight']),
        base: { model: 'demo:q8_0', fits: true, problem: null },
      });
      expect(demo.adapter!.targets).toHaveLength(DEMO_MODEL_SHAPE.blockCount * 2);
      expect([demo.fit, demo.memory, demo.problem]).toEqual([null, null, null]);
      const other = byFile.get('wide/wide-lora-F16.gguf')!;
      expect(other.adapter!.base).toEqual({
        model: 'demo:q8_0',
        fits: false,
        problem: expect.stringMatching(
          /blk\.0\.attn_q\.weight: lora_a \[1024, 8\] .* do not fit the model's \[512, 512\]: an adapter for another model size/,
        ),
      });
      // The table says the same in words; without --for it says how to check.
      const text = await inferlab(['models', 'plan', 'hf:tune/Demo-LoRA-GGUF', '--for', 'demo:q8_0'], env);
      expect(text.stdout).toMatch(/^demo-lora-F16: a LoRA adapter for llama models, rank 8, alpha 16, on 8 tensors; fits demo:q8_0$/m);
      expect(text.stdout).toMatch(
        /^wide-lora-F16: a LoRA adapter for llama models, rank 8, alpha 16, on 8 tensors; does not fit demo:q8_0: /m,
      );
      const unchecked = await inferlab(['models', 'plan', 'hf:tune/Demo-LoRA-GGUF'], env);
      expect(unchecked.stdout).toMatch(/^demo-lora-F16: .*; --for MODEL checks it against a base model before you pull it$/m);
      // A base model that is not one is named.
      const bad = await inferlab(['models', 'plan', 'hf:tune/Demo-LoRA-GGUF', '--for', 'demo:q2'], env);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/Unknown demo model "demo:q2"/);

      // Pulled like any file of the repository, checked against the hub's digest; then it runs as the profile's adapter.
      const pulled = await inferlab(['models', 'pull', 'hf:tune/Demo-LoRA-GGUF', '--quants', 'demo-lora-F16', '--json'], env);
      expect(pulled.code, pulled.stderr).toBe(0);
      const [file] = (JSON.parse(pulled.stdout) as ModelPull).models.flatMap((model) => model.files);
      expect(fs.readFileSync(file!)).toEqual(fs.readFileSync(await resolveModelRef('demo:lora')));
    } finally {
      await hub.close();
    }
  });
});
