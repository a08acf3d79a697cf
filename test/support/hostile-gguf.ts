import fs from 'node:fs';
import path from 'node:path';
import { GGUFValueType } from '@huggingface/gguf';
import { GgmlType, writeGgufFile } from '../../src/main/models/gguf-writer';

/** Small GGUF files, valid and deliberately broken, for reader and CLI tests. */
export function writeValidTinyModel(file: string): void {
  writeGgufFile(
    file,
    [
      { key: 'general.architecture', type: GGUFValueType.STRING, value: 'llama' },
      { key: 'general.file_type', type: GGUFValueType.UINT32, value: 0 },
      { key: 'llama.context_length', type: GGUFValueType.UINT32, value: 2048 },
      { key: 'llama.block_count', type: GGUFValueType.UINT32, value: 1 },
      {
        key: 'tokenizer.ggml.tokens',
        type: GGUFValueType.ARRAY,
        itemType: GGUFValueType.STRING,
        value: Array.from({ length: 40 }, (_, i) => `t${i}`),
      },
    ],
    [{ name: 'w', shape: [8, 4], type: GgmlType.F32, data: () => new Uint8Array(128) }],
  );
}

function header(tensorCount: bigint, kvCount: bigint): Buffer {
  const buffer = Buffer.alloc(24);
  buffer.writeUInt32LE(0x46554747, 0);
  buffer.writeUInt32LE(3, 4);
  buffer.writeBigUInt64LE(tensorCount, 8);
  buffer.writeBigUInt64LE(kvCount, 16);
  return buffer;
}

export function writeHostileFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {
    notGguf: path.join(dir, 'readme.gguf'),
    truncated: path.join(dir, 'truncated.gguf'),
    absurdCounts: path.join(dir, 'absurd-counts.gguf'),
    hugeString: path.join(dir, 'huge-string.gguf'),
    tiny: path.join(dir, 'tiny.gguf'),
  };
  fs.writeFileSync(files.notGguf!, 'This is a text file with a .gguf name.\n'.repeat(4));
  writeValidTinyModel(files.tiny!);
  const valid = fs.readFileSync(files.tiny!);
  fs.writeFileSync(files.truncated!, valid.subarray(0, valid.length - 64));
  fs.writeFileSync(files.absurdCounts!, Buffer.concat([header(1n << 40n, 1n << 40n), Buffer.alloc(64)]));
  // One metadata key whose string value claims 2^62 bytes.
  const key = Buffer.from('general.name');
  const kv = Buffer.alloc(8 + key.length + 4 + 8);
  kv.writeBigUInt64LE(BigInt(key.length), 0);
  key.copy(kv, 8);
  kv.writeUInt32LE(GGUFValueType.STRING, 8 + key.length);
  kv.writeBigUInt64LE(1n << 62n, 12 + key.length);
  fs.writeFileSync(files.hugeString!, Buffer.concat([header(0n, 1n), kv, Buffer.alloc(32)]));
  return files;
}
