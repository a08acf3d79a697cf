import fs from 'node:fs';
import path from 'node:path';
import { gguf, GGUFValueType } from '@huggingface/gguf';
import { describe, expect, it } from 'vitest';
import { GgmlType, writeGgufFile, type GgufEntry, type GgufTensor } from '../../src/main/models/gguf-writer';
import { halfToFloat, seededRandom, toHalf } from '../../src/main/core/random';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('GGUF writer', () => {
  it('round-trips every value type, tensor infos and data through an independent reader', async () => {
    const entries: GgufEntry[] = [
      { key: 'general.architecture', type: GGUFValueType.STRING, value: 'llama' },
      { key: 'test.u8', type: GGUFValueType.UINT8, value: 250 },
      { key: 'test.i8', type: GGUFValueType.INT8, value: -7 },
      { key: 'test.u16', type: GGUFValueType.UINT16, value: 65000 },
      { key: 'test.i16', type: GGUFValueType.INT16, value: -30000 },
      { key: 'test.u32', type: GGUFValueType.UINT32, value: 4_000_000_000 },
      { key: 'test.i32', type: GGUFValueType.INT32, value: -2_000_000_000 },
      { key: 'test.f32', type: GGUFValueType.FLOAT32, value: 0.5 },
      { key: 'test.f64', type: GGUFValueType.FLOAT64, value: Math.PI },
      { key: 'test.u64', type: GGUFValueType.UINT64, value: 2n ** 40n + 3n },
      { key: 'test.i64', type: GGUFValueType.INT64, value: -(2n ** 40n) },
      { key: 'test.bool', type: GGUFValueType.BOOL, value: true },
      { key: 'test.unicode', type: GGUFValueType.STRING, value: 'ñ → 日本 ▁' },
      { key: 'test.strings', type: GGUFValueType.ARRAY, itemType: GGUFValueType.STRING, value: ['<s>', '', 'word'] },
      { key: 'test.ints', type: GGUFValueType.ARRAY, itemType: GGUFValueType.INT32, value: [1, -2, 3] },
    ];
    const f32 = Float32Array.from([1, -2.5, 3.25]);
    const f16 = Uint16Array.from([1, 2, 3, 4, 5, 6].map((value) => toHalf(value / 8)));
    const tensors: GgufTensor[] = [
      { name: 'a.weight', shape: [3], type: GgmlType.F32, data: () => new Uint8Array(f32.buffer) },
      { name: 'b.weight', shape: [3, 2], type: GgmlType.F16, data: () => new Uint8Array(f16.buffer) },
    ];
    const file = path.join(tempDir(), 'model.gguf');
    writeGgufFile(file, entries, tensors);

    const parsed = await gguf(file, { allowLocalFile: true, typedMetadata: true });
    expect(parsed.metadata.version).toBe(3);
    expect(parsed.metadata.tensor_count).toBe(2n);
    for (const entry of entries) {
      const typed = parsed.typedMetadata[entry.key]!;
      expect(typed.type, entry.key).toBe(entry.type);
      if (entry.type === GGUFValueType.FLOAT32) expect(typed.value).toBeCloseTo(entry.value as number);
      else expect(typed.value, entry.key).toEqual(entry.value);
      if (entry.type === GGUFValueType.ARRAY) expect(typed.subType).toBe(entry.itemType);
    }
    expect(parsed.tensorInfos.map((info) => [info.name, info.shape, info.dtype])).toEqual([
      ['a.weight', [3n], 0],
      ['b.weight', [3n, 2n], 1],
    ]);
    const bytes = fs.readFileSync(file);
    const dataStart = Number(parsed.tensorDataOffset);
    expect(dataStart % 32).toBe(0);
    const [first, second] = parsed.tensorInfos.map((info) => dataStart + Number(info.offset));
    expect(second! % 32).toBe(0);
    expect(Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset + first!, bytes.byteOffset + first! + 12)))).toEqual([
      1, -2.5, 3.25,
    ]);
    const halves = new Uint16Array(bytes.buffer.slice(bytes.byteOffset + second!, bytes.byteOffset + second! + 12));
    expect(Array.from(halves, halfToFloat)).toEqual([1, 2, 3, 4, 5, 6].map((value) => value / 8));
  });

  it('refuses a tensor whose data does not match its shape, leaving no file behind', () => {
    const file = path.join(tempDir(), 'bad.gguf');
    const tensor: GgufTensor = { name: 'x', shape: [4], type: GgmlType.F32, data: () => new Uint8Array(8) };
    expect(() => writeGgufFile(file, [], [tensor])).toThrow(/x has 8 bytes, its shape needs 16/);
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(`${file}.partial`)).toBe(false);
  });

  it('refuses duplicate tensor names', () => {
    const tensor: GgufTensor = { name: 'x', shape: [1], type: GgmlType.F32, data: () => new Uint8Array(4) };
    expect(() => writeGgufFile(path.join(tempDir(), 'dup.gguf'), [], [tensor, tensor])).toThrow(/duplicate tensor name x/);
  });
});

describe('half precision and the seeded generator', () => {
  it('converts known values exactly and rounds to nearest even', () => {
    expect(toHalf(1)).toBe(0x3c00);
    expect(toHalf(-2)).toBe(0xc000);
    expect(toHalf(65504)).toBe(0x7bff);
    expect(toHalf(1e6)).toBe(0x7c00);
    expect(toHalf(0)).toBe(0);
    expect(halfToFloat(toHalf(2 ** -24))).toBe(2 ** -24);
    expect(Math.abs(halfToFloat(toHalf(0.1)) - 0.1)).toBeLessThan(1e-4);
    // 1 + 2^-11 lies exactly between two halves; ties go to the even mantissa (1.0).
    expect(toHalf(1 + 2 ** -11)).toBe(0x3c00);
  });

  it('gives the same sequence for the same seed and another for another seed', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const c = seededRandom(8);
    const first = [a(), a(), a()];
    expect([b(), b(), b()]).toEqual(first);
    expect([c(), c(), c()]).not.toEqual(first);
    expect(first.every((value) => value >= 0 && value < 1)).toBe(true);
  });
});
