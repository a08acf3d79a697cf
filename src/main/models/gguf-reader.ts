import fs from 'node:fs';

/**
 * A bounded GGUF header reader for files of unknown origin. Every count and length in the
 * header is checked against what the file can actually hold before anything is allocated,
 * so a hostile or truncated header yields an error naming the problem, never a huge
 * allocation or a hang. Large arrays (the vocabulary) are skipped, keeping only their length.
 */

export class GgufFormatError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
    this.name = 'GgufFormatError';
  }
}

export type GgufMetaValue =
  string | number | bigint | boolean | { arrayOf: string; length: number; head: (string | number | bigint | boolean)[] };

/**
 * A metadata value as a number. Per-layer lists (head_count_kv, feed_forward_length on some
 * architectures) give their largest entry, which bounds what any layer needs.
 */
export function metaNumber(value: GgufMetaValue | undefined): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value && typeof value === 'object' && value.head.length > 0) {
    const numbers = value.head.map((item) => Number(item)).filter(Number.isFinite);
    return numbers.length > 0 ? Math.max(...numbers) : null;
  }
  return null;
}

export interface GgufTensorHeader {
  name: string;
  shape: number[];
  type: number;
  offset: bigint;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufMetaValue>;
  tensors: GgufTensorHeader[];
  dataOffset: number;
  fileSize: number;
}

const LIMITS = {
  maxKeyBytes: 64 * 1024,
  maxStringBytes: 16 * 1024 * 1024,
  maxKvCount: 1_000_000,
  maxTensorCount: 10_000_000,
  maxDims: 8,
  /** Array elements kept in memory; the rest are skipped. */
  arrayHead: 16,
  /**
   * String arrays must be walked one length at a time, so their count is bounded too: the
   * largest vocabularies and merge lists are well under a million entries, while a sparse
   * file can claim a hundred million zero-length strings that take many seconds to skip.
   */
  maxStringArrayLength: 16 * 1024 * 1024,
  /** Reading a header, even a real one with a large vocabulary on a slow disk, takes well under a second. */
  timeBudgetMs: 5000,
};

/** Checked every this many steps: often enough to stop promptly, rarely enough to cost nothing. */
const CLOCK_STRIDE = 4096;

const TYPE_NAMES = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'string', 'array', 'u64', 'i64', 'f64'];
const FIXED_SIZES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/**
 * Where the header's bytes come from: at least `bytes` from `position`, and up to `wanted`
 * when they are at hand (the cursor reads ahead in windows of a MiB).
 */
type ReadAt = (position: number, bytes: number, wanted: number) => Buffer;

/** Reads through a file with a moving window; knows the file size to bound every claim. */
class BoundedCursor {
  private buffer: Buffer = Buffer.alloc(0);
  private bufferStart = 0;
  position = 0;

  private steps = 0;

  constructor(
    private readonly readAt: ReadAt,
    readonly fileSize: number,
    private readonly file: string,
    private readonly deadline: number,
    private readonly budgetMs: number,
  ) {}

  /** Fails once the header has taken longer than its budget, naming what was being read. */
  tick(what: string): void {
    if (++this.steps % CLOCK_STRIDE !== 0) return;
    if (performance.now() > this.deadline)
      this.fail(`${what}: reading the header took longer than ${this.budgetMs} ms, stopped at offset ${this.position}`);
  }

  fail(message: string): never {
    throw new GgufFormatError(this.file, message);
  }

  private ensure(bytes: number, what: string): void {
    if (this.position + bytes > this.fileSize) {
      this.fail(`truncated: ${what} needs ${bytes} bytes at offset ${this.position}, but the file is ${this.fileSize} bytes`);
    }
    const end = this.position + bytes;
    if (this.position >= this.bufferStart && end <= this.bufferStart + this.buffer.length) return;
    this.buffer = this.readAt(this.position, bytes, Math.min(Math.max(bytes, 1 << 20), this.fileSize - this.position));
    this.bufferStart = this.position;
  }

  private view(bytes: number, what: string): Buffer {
    this.ensure(bytes, what);
    const start = this.position - this.bufferStart;
    this.position += bytes;
    return this.buffer.subarray(start, start + bytes);
  }

  u32(what: string): number {
    return this.view(4, what).readUInt32LE(0);
  }
  u64(what: string): bigint {
    return this.view(8, what).readBigUInt64LE(0);
  }

  /** A u64 count that must not exceed `max` nor what the remaining bytes could hold. */
  count(what: string, max: number, minBytesEach: number): number {
    const raw = this.u64(what);
    const remaining = BigInt(this.fileSize - this.position);
    if (raw > BigInt(max)) this.fail(`${what} is ${raw}, more than the ${max} this reader accepts`);
    if (minBytesEach > 0 && raw * BigInt(minBytesEach) > remaining)
      this.fail(`${what} is ${raw}, but only ${remaining} bytes remain in the file`);
    return Number(raw);
  }

  string(what: string, maxBytes: number): string {
    const length = this.u64(`${what} length`);
    if (length > BigInt(maxBytes)) this.fail(`${what} claims ${length} bytes, more than the ${maxBytes} allowed`);
    const bytes = Number(length);
    if (this.position + bytes > this.fileSize)
      this.fail(`truncated: ${what} claims ${bytes} bytes at offset ${this.position}, past the end of the ${this.fileSize}-byte file`);
    return this.view(bytes, what).toString('utf8');
  }

  skip(bytes: number, what: string): void {
    if (this.position + bytes > this.fileSize) this.fail(`truncated: ${what} runs past the end of the file`);
    this.position += bytes;
  }

  scalar(type: number, what: string): string | number | bigint | boolean {
    switch (type) {
      case 0:
        return this.view(1, what).readUInt8(0);
      case 1:
        return this.view(1, what).readInt8(0);
      case 2:
        return this.view(2, what).readUInt16LE(0);
      case 3:
        return this.view(2, what).readInt16LE(0);
      case 4:
        return this.view(4, what).readUInt32LE(0);
      case 5:
        return this.view(4, what).readInt32LE(0);
      case 6:
        return this.view(4, what).readFloatLE(0);
      case 7:
        return this.view(1, what).readUInt8(0) !== 0;
      case 8:
        return this.string(what, LIMITS.maxStringBytes);
      case 10:
        return this.view(8, what).readBigUInt64LE(0);
      case 11:
        return this.view(8, what).readBigInt64LE(0);
      case 12:
        return this.view(8, what).readDoubleLE(0);
      default:
        return this.fail(`${what} has unknown value type ${type}`);
    }
  }
}

function readValue(cursor: BoundedCursor, type: number, key: string): GgufMetaValue {
  if (type !== 9) return cursor.scalar(type, `value of ${key}`);
  const itemType = cursor.u32(`array type of ${key}`);
  if (itemType === 9) cursor.fail(`${key}: nested arrays are not supported`);
  if (TYPE_NAMES[itemType] === undefined) cursor.fail(`${key}: unknown array item type ${itemType}`);
  const fixed = FIXED_SIZES[itemType];
  // A string item takes at least its 8-byte length.
  const length = cursor.count(
    `array length of ${key}`,
    fixed === undefined ? LIMITS.maxStringArrayLength : Number.MAX_SAFE_INTEGER,
    fixed ?? 8,
  );
  const head: (string | number | bigint | boolean)[] = [];
  for (let index = 0; index < length; index++) {
    cursor.tick(`array ${key}`);
    if (index < LIMITS.arrayHead) {
      head.push(cursor.scalar(itemType, `${key}[${index}]`));
    } else if (fixed !== undefined) {
      cursor.skip((length - index) * fixed, `array ${key}`);
      break;
    } else {
      const bytes = cursor.u64(`${key}[${index}] length`);
      if (bytes > BigInt(LIMITS.maxStringBytes)) cursor.fail(`${key}[${index}] claims ${bytes} bytes`);
      cursor.skip(Number(bytes), `${key}[${index}]`);
    }
  }
  return { arrayOf: TYPE_NAMES[itemType]!, length, head };
}

/**
 * Reads a GGUF file's header and tensor table, every count bounded by what the file can hold
 * and the whole by a time budget. Synchronous, reading as it goes: the reference the service's
 * readGgufHeaderAsync is tested against, and what the fuzz tests drive.
 */
export function readGgufHeader(file: string, options: { timeBudgetMs?: number } = {}): GgufHeader {
  const budgetMs = options.timeBudgetMs ?? LIMITS.timeBudgetMs;
  const deadline = performance.now() + budgetMs;
  let fd: number;
  try {
    // Without blocking: opening a FIFO that no one writes to would wait forever. What was opened is checked below.
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw cannotOpen(file, error);
  }
  try {
    const stat = fs.fstatSync(fd);
    checkRegularFile(file, stat);
    const readAt: ReadAt = (position, _bytes, wanted) => {
      const next = Buffer.alloc(wanted);
      fs.readSync(fd, next, 0, wanted, position);
      return next;
    };
    return parseHeader(new BoundedCursor(readAt, stat.size, file, deadline, budgetMs));
  } finally {
    fs.closeSync(fd);
  }
}

/** Asked of the bytes read so far for bytes past them: read more, and parse again. */
class NeedsMoreBytes extends Error {
  constructor(readonly end: number) {
    super(`the header runs past byte ${end}`);
  }
}

/** Most headers fit here; a large vocabulary's may not, and the read grows. */
const FIRST_READ_BYTES = 4 << 20;

/** Where a header's bytes come from when they are not a local file: a size known up front, and reads at any offset. */
export interface GgufByteSource {
  /** Named in every error. */
  name: string;
  size: number;
  /** Up to `length` bytes from `position` (fewer only at the end of the source). */
  read(position: number, length: number): Promise<Buffer>;
}

/**
 * Reads a header from any byte source: what was read so far is parsed from memory, and a
 * header longer than that is read further and parsed again. The time budget covers the
 * reads too, so a stalled source is given up on.
 */
export async function readGgufHeaderFrom(
  source: GgufByteSource,
  options: { timeBudgetMs?: number; firstReadBytes?: number } = {},
): Promise<GgufHeader> {
  const budgetMs = options.timeBudgetMs ?? LIMITS.timeBudgetMs;
  const deadline = performance.now() + budgetMs;
  let read = Buffer.alloc(0);
  let goal = Math.min(source.size, options.firstReadBytes ?? FIRST_READ_BYTES);
  for (;;) {
    const more = goal > read.length ? await source.read(read.length, goal - read.length) : Buffer.alloc(0);
    read = Buffer.concat([read, more]);
    if (performance.now() > deadline)
      throw new GgufFormatError(source.name, `reading the header took longer than ${budgetMs} ms, stopped at offset ${read.length}`);
    const inMemory: ReadAt = (position, bytes, wanted) => {
      if (position + bytes > read.length) throw new NeedsMoreBytes(position + bytes);
      return read.subarray(position, Math.min(position + wanted, read.length));
    };
    try {
      return parseHeader(new BoundedCursor(inMemory, source.size, source.name, deadline, budgetMs));
    } catch (error) {
      if (!(error instanceof NeedsMoreBytes)) throw error;
      if (more.length === 0) throw new GgufFormatError(source.name, `the file ended at ${read.length} bytes while its header was read`);
      goal = Math.min(source.size, Math.max(2 * read.length, error.end + (1 << 20)));
    }
  }
}

/**
 * readGgufHeader for the service: the bytes are read on Node's I/O pool, never on the event
 * loop (a model folder on a stalled network mount delays the call that asked, not the
 * service), and parsed from memory.
 */
export async function readGgufHeaderAsync(file: string, options: { timeBudgetMs?: number } = {}): Promise<GgufHeader> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw cannotOpen(file, error);
  }
  try {
    const stat = await handle.stat();
    checkRegularFile(file, stat);
    const source: GgufByteSource = {
      name: file,
      size: stat.size,
      read: async (position, length) => {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, position);
        return buffer.subarray(0, bytesRead);
      },
    };
    return await readGgufHeaderFrom(source, options);
  } finally {
    await handle.close();
  }
}

function cannotOpen(file: string, error: unknown): GgufFormatError {
  return new GgufFormatError(file, `cannot open: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
}

function checkRegularFile(file: string, stat: fs.Stats): void {
  if (!stat.isFile()) throw new GgufFormatError(file, stat.isFIFO() ? 'a FIFO (named pipe), not a regular file' : 'not a regular file');
}

function parseHeader(cursor: BoundedCursor): GgufHeader {
  const fileSize = cursor.fileSize;
  if (fileSize < 24) cursor.fail(`too small to be GGUF (${fileSize} bytes)`);
  const magic = cursor.u32('magic');
  if (magic !== 0x46554747) cursor.fail(`bad magic 0x${magic.toString(16).padStart(8, '0')}: not a GGUF file`);
  const version = cursor.u32('version');
  if (version < 2 || version > 3) cursor.fail(`unsupported GGUF version ${version} (2 and 3 are supported)`);
  // Each tensor info takes at least 8 (name length) + 4 (n_dims) + 4 (type) + 8 (offset) bytes; each KV at least 8 + 4 + 1.
  const tensorCount = cursor.count('tensor count', LIMITS.maxTensorCount, 24);
  const kvCount = cursor.count('metadata count', LIMITS.maxKvCount, 13);
  const metadata = new Map<string, GgufMetaValue>();
  for (let index = 0; index < kvCount; index++) {
    cursor.tick(`metadata key #${index}`);
    const key = cursor.string(`metadata key #${index}`, LIMITS.maxKeyBytes);
    const type = cursor.u32(`type of ${key}`);
    metadata.set(key, readValue(cursor, type, key));
  }
  const tensors: GgufTensorHeader[] = [];
  for (let index = 0; index < tensorCount; index++) {
    cursor.tick(`tensor #${index}`);
    const name = cursor.string(`tensor #${index} name`, LIMITS.maxKeyBytes);
    const dims = cursor.u32(`dimension count of ${name}`);
    if (dims === 0 || dims > LIMITS.maxDims) cursor.fail(`tensor ${name} has ${dims} dimensions`);
    const shape: number[] = [];
    for (let d = 0; d < dims; d++) {
      const size = cursor.u64(`dimension ${d} of ${name}`);
      if (size === 0n || size > BigInt(Number.MAX_SAFE_INTEGER)) cursor.fail(`tensor ${name} has an absurd dimension ${size}`);
      shape.push(Number(size));
    }
    const type = cursor.u32(`type of ${name}`);
    const offset = cursor.u64(`offset of ${name}`);
    if (offset >= BigInt(fileSize)) cursor.fail(`tensor ${name} starts at ${offset}, past the end of the ${fileSize}-byte file`);
    tensors.push({ name, shape, type, offset });
  }
  const alignmentValue = metadata.get('general.alignment');
  const alignment = typeof alignmentValue === 'number' && alignmentValue > 0 ? alignmentValue : 32;
  const dataOffset = Math.ceil(cursor.position / alignment) * alignment;
  for (const tensor of tensors) {
    if (BigInt(dataOffset) + tensor.offset >= BigInt(fileSize))
      cursor.fail(`truncated: tensor ${tensor.name} data starts past the end of the file`);
  }
  return { version, metadata, tensors, dataOffset, fileSize };
}

/** [elements per block, bytes per block] for ggml tensor types, to bound each tensor's data. */
const GGML_BLOCKS: Record<number, [number, number]> = {
  0: [1, 4],
  1: [1, 2],
  2: [32, 18],
  3: [32, 20],
  6: [32, 22],
  7: [32, 24],
  8: [32, 34],
  9: [32, 36],
  10: [256, 84],
  11: [256, 110],
  12: [256, 144],
  13: [256, 176],
  14: [256, 210],
  15: [256, 292],
  16: [256, 66],
  17: [256, 74],
  18: [256, 98],
  19: [256, 50],
  20: [32, 18],
  21: [256, 110],
  22: [256, 82],
  23: [256, 136],
  24: [1, 1],
  25: [1, 2],
  26: [1, 4],
  27: [1, 8],
  28: [1, 8],
  29: [256, 56],
  30: [1, 2],
  34: [256, 54],
  35: [256, 66],
  39: [32, 17],
};

/** Bytes a tensor's data occupies, or null for a type this table does not know. */
export function tensorDataBytes(tensor: GgufTensorHeader): number | null {
  const block = GGML_BLOCKS[tensor.type];
  if (!block) return null;
  const elements = tensor.shape.reduce((product, dim) => product * dim, 1);
  return Math.ceil(elements / block[0]) * block[1];
}

/** Throws when the last tensor's data would run past the end of the file. */
export function assertTensorDataInFile(file: string, header: GgufHeader): void {
  for (const tensor of header.tensors) {
    const bytes = tensorDataBytes(tensor);
    if (bytes === null) continue;
    const end = header.dataOffset + Number(tensor.offset) + bytes;
    if (end > header.fileSize)
      throw new GgufFormatError(
        file,
        `truncated: tensor ${tensor.name} needs bytes up to ${end}, but the file is ${header.fileSize} bytes`,
      );
  }
}
