import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ModelPlan, ModelPull } from '../../src/shared/contract/models';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { DEMO_PROJECTOR_IMAGE_TOKENS } from '../../src/main/models/synthetic-projector';
import { inferlab, inferlabJson } from '../support/cli';
import { startStandInHub } from '../support/stand-in-hub';
import { storedServerConfig } from '../support/stored-server';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** A 40 × 30 BMP of seeded noise (constructed): a format llama-server decodes, written without a library. */
function noiseBmp(width = 40, height = 30): Buffer {
  const row = Math.ceil((width * 3) / 4) * 4;
  const pixels = Buffer.alloc(row * height);
  let state = 7;
  for (let index = 0; index < pixels.length; index++) pixels[index] = (state = (state * 1103515245 + 12345) >>> 0) >>> 24;
  const header = Buffer.alloc(54);
  header.write('BM', 0);
  header.writeUInt32LE(54 + pixels.length, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(width, 18);
  header.writeInt32LE(height, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  header.writeUInt32LE(pixels.length, 34);
  return Buffer.concat([header, pixels]);
}

/** The same question twice: once as text, once beside a picture, so the picture's tokens are the difference. */
function writeImageWorkload(dir: string): string {
  fs.writeFileSync(path.join(dir, 'noise.bmp'), noiseBmp());
  const file = path.join(dir, 'pictures.yaml');
  fs.writeFileSync(
    file,
    [
      'name: pictures',
      'groups:',
      '  - name: pictures',
      '    items:',
      '      - id: text-only',
      '        messages: [{ role: user, content: What is in this picture? }]',
      '        max_tokens: 4',
      '      - id: with-image',
      '        messages: [{ role: user, content: What is in this picture? }]',
      '        images: [{ file: noise.bmp }]',
      '        max_tokens: 4',
      '',
    ].join('\n'),
  );
  return file;
}

describe('images on the real llama-server', () => {
  it("shows a workload's picture to the demo model through the demo projector; the run keeps the image's hash, not its bytes", async () => {
    const dir = tempDir();
    const db = path.join(dir, 'i.db');
    const workload = writeImageWorkload(dir);
    const summary = await inferlabJson(
      ['run', '--model', 'demo:f16', '--set', 'projector=demo:mmproj', '--workload', workload, '--requests', '4'],
      db,
    );
    expect(summary.status).toBe('completed');
    expect(summary.requests).toMatchObject({ attempted: 4, completed: 4, failed: 0 });

    const { argv } = storedServerConfig(db, summary.run_id);
    expect(argv[argv.indexOf('--mmproj') + 1]).toMatch(/demo-mmproj\.gguf$/);
    const record = new Database(db, { readonly: true });
    try {
      const rows = record
        .prepare('SELECT item_id, prompt_tokens, prompt_text FROM requests WHERE run_id = ? ORDER BY seq')
        .all(summary.run_id) as {
        item_id: string;
        prompt_tokens: number;
        prompt_text: string;
      }[];
      const tokensOf = (item: string) => new Set(rows.filter((row) => row.item_id === item).map((row) => row.prompt_tokens));
      // The server counted the picture: its tokens, and the markers around them, beside the same text.
      const [textTokens] = [...tokensOf('text-only')];
      const [imageTokens] = [...tokensOf('with-image')];
      expect(tokensOf('with-image').size).toBe(1);
      expect(imageTokens! - textTokens!).toBeGreaterThanOrEqual(DEMO_PROJECTOR_IMAGE_TOKENS);
      const kept = rows.find((row) => row.item_id === 'with-image')!.prompt_text;
      expect(kept).toMatch(/"url":"image\/bmp, 3654 bytes, sha256 [0-9a-f]{64}"/);
      expect(kept).not.toContain('base64');
    } finally {
      record.close();
    }
  });

  it('refuses, before any server starts, pictures without a projector and a projector that is no projector, naming the field', async () => {
    const dir = tempDir();
    const workload = writeImageWorkload(dir);
    const db = path.join(dir, 'r.db');
    // A model named by its file: only the demo refs take the demo projector by default.
    const modelFile = await resolveModelRef('demo:f16');
    const noProjector = await inferlab(['run', '--model', modelFile, '--workload', workload, '--requests', '2', '--db', db]);
    expect(noProjector.code).toBe(2);
    expect(noProjector.stderr).toMatch(/workload item "with-image" shows images, but the profile names no image projector: .*demo:mmproj/);
    const wrongFile = await inferlab(['run', '--model', 'demo:f16', '--set', 'projector=demo:lora', '--workload', workload, '--db', db]);
    expect(wrongFile.code).toBe(2);
    expect(wrongFile.stderr).toMatch(/projector .*demo-lora\.gguf: general\.architecture is "llama", not "clip"/);
    for (const result of [noProjector, wrongFile]) expect(result.stderr).not.toMatch(/starting llama-server/);
  });

  it('runs the built-in vision workload on a demo model, which takes the demo projector when none is named; its checks fail by design', async () => {
    const db = path.join(tempDir(), 'v.db');
    const result = await inferlab([
      'run',
      '--workload',
      'vision',
      '--model',
      'demo:q8_0',
      '--requests',
      '4',
      '--warmup',
      '1',
      '--db',
      db,
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(
      /the workload shows images: demo:q8_0 is served with the demo projector \(demo:mmproj; --set projector=FILE for another\)/,
    );
    const summary = JSON.parse(result.stdout);
    expect(summary.requests).toMatchObject({ attempted: 4, completed: 4, accepted: 0, checked: 4 });
    expect(Object.keys(summary.groups)).toEqual(['pictures', 'text-only']);
    // The server's log splits each picture out of its prompt: encoded once each, 16 tokens into the model. Of the four
    // pictures shown, the warm-up's (colour) is left out, and the measured colour, asked again, comes from the prompt cache.
    expect(summary.images).toMatchObject({
      images: 2,
      image_tokens: 2 * DEMO_PROJECTOR_IMAGE_TOKENS,
      encodes: 2,
      measured_window_only: true,
    });
    expect(summary.images.image_encode_ms.p50).toBeGreaterThan(0);
    expect(summary.images.image_decode_ms.n).toBe(2);
    const shown = await inferlab(['runs', 'show', summary.run_id, '--db', db]);
    expect(shown.stdout).toMatch(
      /^images: 2 decoded into the model, 16 tokens each \(32 in all\), decode p50 [\d.]+ ms each; encoder p50 [\d.]+ ms over 2 encodes .*, measured requests only$/m,
    );
    const argv = storedServerConfig(db, summary.run_id).argv;
    expect(argv[argv.indexOf('--mmproj') + 1]).toBe(await resolveModelRef('demo:mmproj'));
    // Each picture adds the projector's tokens to its question's prompt.
    const record = new Database(db, { readonly: true });
    try {
      const prompts = record
        .prepare('SELECT item_id, prompt_tokens, warmup FROM requests WHERE run_id = ? ORDER BY seq')
        .all(summary.run_id) as {
        item_id: string;
        prompt_tokens: number;
        warmup: number;
      }[];
      expect(prompts.map((row) => `${row.item_id}${row.warmup ? ' (warm-up)' : ''}`)).toEqual([
        'colour (warm-up)',
        'count',
        'shape',
        'colour-text',
        'colour',
      ]);
      for (const row of prompts.filter((row) => row.item_id !== 'colour-text'))
        expect(row.prompt_tokens).toBeGreaterThan(DEMO_PROJECTOR_IMAGE_TOKENS);
    } finally {
      record.close();
    }
  });

  it("plans a vision model's repository with its projector, pulls the model and the projector named, and runs pictures on them", async () => {
    const dir = tempDir();
    // Constructed: a repository as vision models are published, the weights and an mmproj file beside them.
    const hub = await startStandInHub({
      repos: {
        'vision/Demo-Vision-GGUF': {
          files: {
            'Demo-Vision-F16.gguf': fs.readFileSync(await resolveModelRef('demo:f16')),
            'mmproj-Demo-Vision-F16.gguf': fs.readFileSync(await resolveModelRef('demo:mmproj')),
          },
        },
      },
    });
    try {
      const env = { HF_ENDPOINT: hub.url, HF_HOME: tempDir(), HF_HUB_CACHE: path.join(dir, 'cache') };
      const planned = await inferlab(['models', 'plan', 'hf:vision/Demo-Vision-GGUF', '--json'], env);
      expect(planned.code, planned.stderr).toBe(0);
      const projector = (JSON.parse(planned.stdout) as ModelPlan).candidates.find((candidate) => candidate.projector)!;
      expect(projector).toMatchObject({
        label: 'mmproj-Demo-Vision-F16',
        projector: { vision: true, audio: false, projectorType: 'gemma3' },
      });
      const text = await inferlab(['models', 'plan', 'hf:vision/Demo-Vision-GGUF'], env);
      expect(text.stdout).toMatch(
        /^mmproj-Demo-Vision-F16: a multimodal projector \(gemma3\) for images; pull it with the model, and serve the model with --set projector=mmproj-Demo-Vision-F16\.gguf$/m,
      );
      // Without --quants the only model is pulled alone; named, the projector comes with it.
      const alone = await inferlab(['models', 'pull', 'hf:vision/Demo-Vision-GGUF', '--json'], env);
      expect(alone.code, alone.stderr).toBe(0);
      expect((JSON.parse(alone.stdout) as ModelPull).models.map((pulledModel) => pulledModel.label)).toEqual(['F16']);
      const pulled = await inferlab(
        ['models', 'pull', 'hf:vision/Demo-Vision-GGUF', '--quants', 'F16,mmproj-Demo-Vision-F16', '--json'],
        env,
      );
      expect(pulled.code, pulled.stderr).toBe(0);
      const files = (JSON.parse(pulled.stdout) as ModelPull).models.flatMap((model) => model.files);
      const model = files.find((file) => file.endsWith('Demo-Vision-F16.gguf') && !file.includes('mmproj'))!;
      const projectorFile = files.find((file) => file.includes('mmproj'))!;
      const summary = await inferlabJson(
        ['run', '--model', model, '--set', `projector=${projectorFile}`, '--workload', writeImageWorkload(dir), '--requests', '2'],
        path.join(dir, 'v.db'),
      );
      expect(summary.requests).toMatchObject({ attempted: 2, completed: 2, failed: 0 });
    } finally {
      await hub.close();
    }
  });
});
