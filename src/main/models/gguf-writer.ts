import fs from 'node:fs';
import { GGUFValueType } from '@huggingface/gguf';

/**
 * A GGUF v3 writer: enough of the format to write models whose tensors are F32 or F16.
 * Layout: header, key/value metadata, tensor infos, padding, then each tensor's data at
 * an offset aligned to `general.alignment`.
 */

export type GgufScalarType = Exclude<GGUFValueType, GGUFValueType.ARRAY>;
export type GgufScalar = string | number | bigint | boolean;

export type GgufEntry =
  | { key: string; type: GgufScalarType; value: GgufScalar }
  | { key: string; type: GGUFValueType.ARRAY; itemType: GgufScalarType; value: readonly GgufScalar[] };

/** ggml tensor element types this writer can store. */
export const GgmlType = { F32: 0, F16: 1 } as const;
export type GgmlType = (typeof GgmlType)[keyof typeof GgmlType];
const BYTES_PER_ELEMENT: Record<GgmlType, number> = { [GgmlType.F32]: 4, [GgmlType.F16]: 2 };

export interface GgufTensor {
  name: string;
  /** ggml order: shape[0] is the innermost (contiguous) dimension. */
  shape: readonly number[];
  type: GgmlType;
  /** Produces the tensor's bytes when it is written, so large models never sit in memory whole. */
  data: () => Uint8Array;
}

const GGUF_MAGIC = 0x46554747; // "GGUF" read as little-endian u32
const GGUF_VERSION = 3;
export const DEFAULT_ALIGNMENT = 32;

class ByteSink {
  private buffer = Buffer.alloc(1 << 16);
  length = 0;

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const next = Buffer.alloc(size);
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }

  u8(value: number): void {
    this.reserve(1);
    this.buffer.writeUInt8(value, this.length);
    this.length += 1;
  }
  i8(value: number): void {
    this.reserve(1);
    this.buffer.writeInt8(value, this.length);
    this.length += 1;
  }
  u16(value: number): void {
    this.reserve(2);
    this.buffer.writeUInt16LE(value, this.length);
    this.length += 2;
  }
  i16(value: number): void {
    this.reserve(2);
    this.buffer.writeInt16LE(value, this.length);
    this.length += 2;
  }
  u32(value: number): void {
    this.reserve(4);
    this.buffer.writeUInt32LE(value, this.length);
    this.length += 4;
  }
  i32(value: number): void {
    this.reserve(4);
    this.buffer.writeInt32LE(value, this.length);
    this.length += 4;
  }
  f32(value: number): void {
    this.reserve(4);
    this.buffer.writeFloatLE(value, this.length);
    this.length += 4;
  }
  f64(value: number): void {
    this.reserve(8);
    this.buffer.writeDoubleLE(value, this.length);
    this.length += 8;
  }
  u64(value: bigint | number): void {
    this.reserve(8);
    this.buffer.writeBigUInt64LE(BigInt(value), this.length);
    this.length += 8;
  }
  i64(value: bigint | number): void {
    this.reserve(8);
    this.buffer.writeBigInt64LE(BigInt(value), this.length);
    this.length += 8;
  }
  string(value: string): void {
    const bytes = Buffer.from(value, 'utf8');
    this.u64(bytes.length);
    this.reserve(bytes.length);
    bytes.copy(this.buffer, this.length);
    this.length += bytes.length;
  }
  padTo(alignment: number): void {
    const padding = (alignment - (this.length % alignment)) % alignment;
    this.reserve(padding);
    this.buffer.fill(0, this.length, this.length + padding);
    this.length += padding;
  }
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function writeScalar(sink: ByteSink, type: GgufScalarType, value: GgufScalar, key: string): void {
  const number = (): number => {
    if (typeof value !== 'number' && typeof value !== 'bigint')
      throw new TypeError(`GGUF key ${key}: expected a number, got ${typeof value}`);
    return Number(value);
  };
  switch (type) {
    case GGUFValueType.UINT8:
      return sink.u8(number());
    case GGUFValueType.INT8:
      return sink.i8(number());
    case GGUFValueType.UINT16:
      return sink.u16(number());
    case GGUFValueType.INT16:
      return sink.i16(number());
    case GGUFValueType.UINT32:
      return sink.u32(number());
    case GGUFValueType.INT32:
      return sink.i32(number());
    case GGUFValueType.FLOAT32:
      return sink.f32(number());
    case GGUFValueType.FLOAT64:
      return sink.f64(number());
    case GGUFValueType.UINT64:
      return sink.u64(typeof value === 'bigint' ? value : BigInt(number()));
    case GGUFValueType.INT64:
      return sink.i64(typeof value === 'bigint' ? value : BigInt(number()));
    case GGUFValueType.BOOL:
      return sink.u8(value ? 1 : 0);
    case GGUFValueType.STRING:
      if (typeof value !== 'string') throw new TypeError(`GGUF key ${key}: expected a string`);
      return sink.string(value);
  }
}

export function tensorByteLength(tensor: Pick<GgufTensor, 'shape' | 'type'>): number {
  return tensor.shape.reduce((product, dim) => product * dim, 1) * BYTES_PER_ELEMENT[tensor.type];
}

/** Encodes everything before the tensor data, and where each tensor's data goes. */
export function encodeGgufHeader(
  entries: readonly GgufEntry[],
  tensors: readonly GgufTensor[],
  alignment = DEFAULT_ALIGNMENT,
): { header: Buffer; offsets: number[] } {
  const names = new Set<string>();
  for (const tensor of tensors) {
    if (names.has(tensor.name)) throw new Error(`GGUF: duplicate tensor name ${tensor.name}`);
    names.add(tensor.name);
  }
  const sink = new ByteSink();
  sink.u32(GGUF_MAGIC);
  sink.u32(GGUF_VERSION);
  sink.u64(tensors.length);
  sink.u64(entries.length);
  for (const entry of entries) {
    sink.string(entry.key);
    sink.u32(entry.type);
    if (entry.type === GGUFValueType.ARRAY) {
      sink.u32(entry.itemType);
      sink.u64(entry.value.length);
      for (const item of entry.value) writeScalar(sink, entry.itemType, item, entry.key);
    } else {
      writeScalar(sink, entry.type, entry.value, entry.key);
    }
  }
  const offsets: number[] = [];
  let offset = 0;
  for (const tensor of tensors) {
    sink.string(tensor.name);
    sink.u32(tensor.shape.length);
    for (const dim of tensor.shape) sink.u64(dim);
    sink.u32(tensor.type);
    sink.u64(offset);
    offsets.push(offset);
    offset += tensorByteLength(tensor);
    offset += (alignment - (offset % alignment)) % alignment;
  }
  sink.padTo(alignment);
  return { header: Buffer.from(sink.bytes()), offsets };
}

/** Writes a GGUF file atomically: a partial file never appears under the final name. */
export function writeGgufFile(file: string, entries: readonly GgufEntry[], tensors: readonly GgufTensor[]): void {
  const alignmentEntry = entries.find((entry) => entry.key === 'general.alignment');
  const alignment = alignmentEntry && alignmentEntry.type !== GGUFValueType.ARRAY ? Number(alignmentEntry.value) : DEFAULT_ALIGNMENT;
  const { header, offsets } = encodeGgufHeader(entries, tensors, alignment);
  const temporary = `${file}.partial`;
  const fd = fs.openSync(temporary, 'w');
  try {
    fs.writeSync(fd, header);
    let written = 0;
    tensors.forEach((tensor, index) => {
      const data = tensor.data();
      const expected = tensorByteLength(tensor);
      if (data.byteLength !== expected)
        throw new Error(`GGUF: tensor ${tensor.name} has ${data.byteLength} bytes, its shape needs ${expected}`);
      const padding = (offsets[index] ?? 0) - written;
      if (padding > 0) fs.writeSync(fd, Buffer.alloc(padding));
      fs.writeSync(fd, data);
      written = (offsets[index] ?? 0) + data.byteLength;
    });
    fs.fsyncSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(temporary, { force: true });
    throw error;
  }
  fs.closeSync(fd);
  fs.renameSync(temporary, file);
}
