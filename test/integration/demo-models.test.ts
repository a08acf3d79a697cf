import fs from 'node:fs';
import path from 'node:path';
import { gguf } from '@huggingface/gguf';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/shared/errors';
import { AppError } from '../../src/main/core/errors';
import { toolPath } from '../../src/main/engines/llamacpp/locate-engine';
import { checkDemoFile, DEMO_VARIANTS, ensureDemoModels, resolveModelRef } from '../../src/main/models/demo-models';
import { findFreePort } from '../../src/main/core/ports';
import { ManagedProcess } from '../../src/main/core/process';
import { DEMO_MODEL_SHAPE } from '../../src/main/models/synthetic-model';
import { requireEngine, requireVocabFile } from '../support/engine';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('demo models', () => {
  it('are llama models with the real vocabulary, in F16, Q8_0 and Q4_K_M', async () => {
    const expectedFileType = { 'demo:f16': 1, 'demo:q8_0': 7, 'demo:q4_k_m': 15 };
    for (const variant of DEMO_VARIANTS) {
      const file = await resolveModelRef(variant.ref);
      const { metadata, tensorInfos } = await gguf(file, { allowLocalFile: true });
      const meta = metadata as Record<string, unknown>;
      expect(meta['general.architecture']).toBe('llama');
      expect(meta['inferlab.synthetic']).toBe(true);
      expect(meta['llama.embedding_length']).toBe(DEMO_MODEL_SHAPE.embeddingLength);
      expect(meta['llama.block_count']).toBe(DEMO_MODEL_SHAPE.blockCount);
      expect((meta['tokenizer.ggml.tokens'] as string[]).length).toBe(32000);
      expect(meta['general.file_type']).toBe(expectedFileType[variant.ref as keyof typeof expectedFileType]);
      // Embedding, output norm and an untied output head, then nine tensors per block.
      expect(tensorInfos.length).toBe(3 + 9 * DEMO_MODEL_SHAPE.blockCount);
    }
    const sizes = await Promise.all(DEMO_VARIANTS.map(async (variant) => fs.statSync(await resolveModelRef(variant.ref)).size));
    expect(sizes[0]).toBeGreaterThan(sizes[1]!);
    expect(sizes[1]).toBeGreaterThan(sizes[2]!);
  });

  it('refuses a corrupt demo model and setup regenerates it, the same bytes from the same seed', async () => {
    const engine = await requireEngine();
    // A copy of the models setup made for this checkout (in another process, earlier), with their manifest.
    const installed = path.dirname(await resolveModelRef('demo:f16'));
    const dir = tempDir();
    for (const entry of fs.readdirSync(installed, { withFileTypes: true }))
      if (entry.isFile()) fs.copyFileSync(path.join(installed, entry.name), path.join(dir, entry.name));
    const log: string[] = [];
    const options = {
      vocabFile: requireVocabFile(),
      quantizeBinary: toolPath(engine, 'llama-quantize')!,
      dir,
      log: (line: string) => log.push(line),
    };
    await ensureDemoModels(options);
    expect(log.filter((line) => /^(writing|quantizing)/.test(line))).toEqual([]);
    const q8 = path.join(dir, 'demo-q8_0.gguf');
    const original = fs.readFileSync(q8);

    const damaged = Buffer.from(original);
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 100) ^ 0xff, damaged.length - 100);
    fs.writeFileSync(q8, damaged);
    expect((await checkDemoFile(DEMO_VARIANTS[1]!, dir)).status).toBe('corrupt');
    const refused = await resolveModelRef('demo:q8_0', dir).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe(ErrorCode.DemoModelInvalid);
    expect((refused as AppError).message).toMatch(/sha256 differs.*Run \.\/bin\/inferlab setup/);

    log.length = 0;
    await ensureDemoModels(options);
    expect(log.join('\n')).toMatch(/demo-q8_0.gguf: corrupt .* regenerating/);
    expect(log.join('\n')).not.toMatch(/demo-f16.gguf/);
    expect(fs.readFileSync(q8).equals(original)).toBe(true);

    fs.rmSync(path.join(dir, 'demo-f16.gguf'));
    log.length = 0;
    await ensureDemoModels(options);
    // A new original means every quantization derived from it is made again, and the adapter and projector made for it.
    expect(log.filter((line) => /^(writing|quantizing)/.test(line))).toHaveLength(5);
    for (const companion of ['demo-lora.gguf', 'demo-mmproj.gguf'])
      expect(fs.readFileSync(path.join(dir, companion)).equals(fs.readFileSync(path.join(installed, companion))), companion).toBe(true);
    expect(await resolveModelRef('demo:f16', dir)).toBe(path.join(dir, 'demo-f16.gguf'));
    expect(fs.readFileSync(path.join(dir, 'demo-f16.gguf')).equals(fs.readFileSync(path.join(installed, 'demo-f16.gguf')))).toBe(true);
  });

  it('keep their greedy output under Q8_0 quantization, and it reads as varied text rather than one token repeated', async () => {
    // Prompts ending inside and outside the text the weights were shaped from.
    const prompts = [
      'The old harbour',
      'Once upon a time, in a land far away,',
      'SELECT name, price FROM products WHERE',
      'Die Katze sitzt auf dem',
    ];
    const outputs = new Map<string, number[][]>();
    const engine = await requireEngine();
    for (const ref of ['demo:f16', 'demo:q8_0']) {
      // A bare llama-server: this checks the model, not the app's server management or its
      // contention policy, and timing plays no part.
      const port = await findFreePort();
      const server = new ManagedProcess(engine.serverPath, [
        '-m',
        await resolveModelRef(ref),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '-c',
        '1024',
        '-np',
        '1',
        '-t',
        '2',
      ]);
      const baseUrl = `http://127.0.0.1:${port}`;
      try {
        const deadline = Date.now() + 60_000;
        while (
          !(await fetch(`${baseUrl}/health`).then(
            (response) => response.ok,
            () => false,
          ))
        ) {
          if (Date.now() > deadline) throw new Error(`llama-server for ${ref} did not become ready:\n${server.logs.text(20)}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        const tokens: number[][] = [];
        for (const prompt of prompts) {
          const response = await fetch(`${baseUrl}/completion`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ prompt, n_predict: 32, temperature: 0, seed: 1, return_tokens: true, cache_prompt: false }),
          });
          tokens.push(((await response.json()) as { tokens: number[] }).tokens);
        }
        outputs.set(ref, tokens);
      } finally {
        await server.stop();
      }
    }
    const f16 = outputs.get('demo:f16')!;
    expect(outputs.get('demo:q8_0')).toEqual(f16);
    for (const tokens of f16) {
      expect(tokens).toHaveLength(32);
      // Flat logits settle into one token or a short loop; a walk along the text does not.
      expect(new Set(tokens).size).toBeGreaterThanOrEqual(24);
      expect(tokens.some((token, index) => index > 0 && token === tokens[index - 1])).toBe(false);
    }
    expect(new Set(f16.map((tokens) => tokens.join(','))).size).toBe(prompts.length);
  });

  it('names the problem for unknown demo names and missing paths', async () => {
    await expect(resolveModelRef('demo:q2_k')).rejects.toThrow(
      /Unknown demo model "demo:q2_k"; expected one of demo:f16, demo:q8_0, demo:q4_k_m/,
    );
    await expect(resolveModelRef('/nonexistent/model.gguf')).rejects.toThrow(/Model file not found: \/nonexistent\/model.gguf/);
  });
});
