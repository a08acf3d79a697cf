import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufFormatError, readGgufHeader, readGgufHeaderAsync } from '../../src/main/models/gguf-reader';
import { defaultModelFolders, describeModel, scanModels } from '../../src/main/models/model-library';
import { seededRandom } from '../../src/main/core/random';
import { writeHostileFiles, writeValidTinyModel } from '../support/hostile-gguf';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('bounded GGUF reader', () => {
  it('reads metadata and tensors, keeping only the head of large arrays', () => {
    const file = path.join(tempDir(), 'tiny.gguf');
    writeValidTinyModel(file);
    const header = readGgufHeader(file);
    expect(header.metadata.get('general.architecture')).toBe('llama');
    expect(header.metadata.get('tokenizer.ggml.tokens')).toEqual({
      arrayOf: 'string',
      length: 40,
      head: Array.from({ length: 16 }, (_, i) => `t${i}`),
    });
    expect(header.tensors).toEqual([{ name: 'w', shape: [8, 4], type: 0, offset: 0n }]);
    expect(header.dataOffset % 32).toBe(0);
  });

  it.each([
    ['notGguf', /bad magic 0x[0-9a-f]{8}: not a GGUF file/],
    ['truncated', /truncated: tensor w needs bytes up to/],
    ['absurdCounts', /tensor count is 1099511627776, more than the 10000000 this reader accepts/],
    ['hugeString', /value of general.name length|claims 4611686018427387904 bytes, more than the 16777216 allowed/],
  ])('rejects %s with a message naming the file and the problem', async (name, message) => {
    const files = writeHostileFiles(tempDir());
    const model = await describeModel(files[name]!);
    expect(model.valid).toBe(false);
    expect(model.invalidReason).toMatch(message);
  });

  it('names missing files and parts of split models', async () => {
    const dir = tempDir();
    expect((await describeModel(path.join(dir, 'nope.gguf'))).invalidReason).toBe('missing file');
    writeValidTinyModel(path.join(dir, 'big-00001-of-00002.gguf'));
    expect((await describeModel(path.join(dir, 'big-00001-of-00002.gguf'))).invalidReason).toBe(
      'missing split part(s): big-00002-of-00002.gguf',
    );
  });

  it('lists a split model once, with every part and the total size', async () => {
    const dir = tempDir();
    writeValidTinyModel(path.join(dir, 'big-00001-of-00002.gguf'));
    writeValidTinyModel(path.join(dir, 'big-00002-of-00002.gguf'));
    const { models } = await scanModels([dir]);
    expect(models).toHaveLength(1);
    expect(models[0]!.parts).toHaveLength(2);
    expect(models[0]!.sizeBytes).toBe(2 * fs.statSync(path.join(dir, 'big-00001-of-00002.gguf')).size);
    expect(models[0]!.parameterCount).toBe(64);
  });

  it("finds Ollama's models through its manifests, named by model and tag, and skips manifests it cannot read", async () => {
    const store = tempDir();
    const digest = 'a'.repeat(64);
    fs.mkdirSync(path.join(store, 'blobs'));
    writeValidTinyModel(path.join(store, 'blobs', `sha256-${digest}`));
    const manifestDir = path.join(store, 'manifests', 'registry.ollama.ai', 'library', 'tiny');
    fs.mkdirSync(manifestDir, { recursive: true });
    const layers = [
      { mediaType: 'application/vnd.ollama.image.template', digest: `sha256:${'b'.repeat(64)}` },
      { mediaType: 'application/vnd.ollama.image.model', digest: `sha256:${digest}` },
    ];
    fs.writeFileSync(path.join(manifestDir, 'latest'), JSON.stringify({ layers }));
    fs.writeFileSync(path.join(manifestDir, 'broken'), '{ not json');
    fs.writeFileSync(
      path.join(manifestDir, 'escape'),
      JSON.stringify({ layers: [{ mediaType: layers[1]!.mediaType, digest: 'sha256:../../x' }] }),
    );
    const { models } = await scanModels([store]);
    expect(models.map((model) => [model.name, model.source, model.valid])).toEqual([['tiny:latest (Ollama)', 'ollama', true]]);
    expect(models[0]!.path).toBe(path.join(store, 'blobs', `sha256-${digest}`));
  });

  it("scans llama.cpp's download cache and the Ollama store by default, where their variables point", () => {
    const folders = defaultModelFolders({ LLAMA_CACHE: '/llama-cache', OLLAMA_MODELS: '/ollama-models', HF_HUB_CACHE: '/hf' });
    expect(folders).toEqual(expect.arrayContaining(['/llama-cache', '/ollama-models', '/hf']));
  });

  it('never throws anything but a format error, nor hangs, on randomly damaged headers; both readers agree on each', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'tiny.gguf');
    writeValidTinyModel(file);
    const original = fs.readFileSync(file);
    const random = seededRandom(99);
    const damaged = path.join(dir, 'damaged.gguf');
    for (let round = 0; round < 400; round++) {
      const bytes = Buffer.from(original.subarray(0, 1 + Math.floor(random() * original.length)));
      for (let flips = 0; flips < 4; flips++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      fs.writeFileSync(damaged, bytes);
      const outcome = (read: () => unknown) => {
        try {
          return { header: read() };
        } catch (error) {
          expect(error).toBeInstanceOf(GgufFormatError);
          return { error: (error as Error).message };
        }
      };
      const synchronous = outcome(() => readGgufHeader(damaged));
      const onThePool = await readGgufHeaderAsync(damaged).then(
        (header) => ({ header }),
        (error: Error) => {
          expect(error).toBeInstanceOf(GgufFormatError);
          return { error: error.message };
        },
      );
      expect(onThePool, `round ${round}`).toEqual(synchronous);
    }
  });

  it('reads a header that runs past its first read (4 MiB) further, and gets what the synchronous reader gets', async () => {
    const file = path.join(tempDir(), 'long-vocabulary.gguf');
    // A million empty tokens: an 8 MB header.
    writeSparseStringArray(file, 1_000_000n, 9_000_000);
    const viaPool = await readGgufHeaderAsync(file);
    expect(viaPool.dataOffset).toBeGreaterThan(8_000_000);
    expect(viaPool).toEqual(readGgufHeader(file));
  });
});

/** A header with one string array whose count the file could hold (8 bytes each), the rest left sparse. */
function writeSparseStringArray(file: string, count: bigint, sizeBytes: number): void {
  const key = Buffer.from('tokenizer.ggml.tokens');
  const head = Buffer.alloc(24 + 8 + key.length + 4 + 4 + 8);
  head.writeUInt32LE(0x46554747, 0);
  head.writeUInt32LE(3, 4);
  head.writeBigUInt64LE(0n, 8);
  head.writeBigUInt64LE(1n, 16);
  head.writeBigUInt64LE(BigInt(key.length), 24);
  key.copy(head, 32);
  head.writeUInt32LE(9, 32 + key.length);
  head.writeUInt32LE(8, 36 + key.length);
  head.writeBigUInt64LE(count, 40 + key.length);
  fs.writeFileSync(file, head);
  fs.truncateSync(file, sizeBytes);
}

describe('GGUF reader time bound', () => {
  it('refuses a sparse 800 MB file whose string array claims 100 million entries within 2 s, naming the field', () => {
    const file = path.join(tempDir(), 'sparse.gguf');
    writeSparseStringArray(file, 100_000_000n, 800 * 1024 * 1024);
    const started = performance.now();
    expect(() => readGgufHeader(file)).toThrow(/tokenizer\.ggml\.tokens/);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('gives up on a header that takes longer than its time budget, naming the field it was reading', () => {
    const file = path.join(tempDir(), 'slow.gguf');
    writeSparseStringArray(file, 5_000_000n, 64 * 1024 * 1024);
    const started = performance.now();
    expect(() => readGgufHeader(file, { timeBudgetMs: 20 })).toThrow(/tokenizer\.ggml\.tokens.*20 ms/);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});
