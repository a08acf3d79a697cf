/**
 * A ZIP archive of STORED (uncompressed) entries, for handing several export files to the
 * browser as one download. Runs in the browser and in Node alike, so it only uses the
 * standard typed-array and TextEncoder APIs. No ZIP64: the limits of the classic format are
 * refused up front rather than written as an archive some readers would misread.
 */

export interface ZipEntry {
  name: string;
  content: string | Uint8Array;
}

const LOCAL_HEADER = 30;
const CENTRAL_HEADER = 46;
const END_OF_CENTRAL_DIRECTORY = 22;
const MAX_ENTRIES = 0xffff;
// 0xFFFFFFFF in a size or offset field tells readers to look for ZIP64 fields, so it is not a usable value.
const MAX_32 = 0xfffffffe;
// 2.0: the lowest version readers accept without complaint for STORED entries with folders in their names.
const VERSION = 20;
const FLAG_UTF8_NAMES = 1 << 11;
// Made on Unix: Info-ZIP's unzip recodes the names of archives made on MS-DOS from CP437, UTF-8 flag or not.
const MADE_BY = (3 << 8) | VERSION;
// A regular file, rw-r--r--, in the Unix half of the external attributes.
const FILE_ATTRIBUTES = (0o100644 << 16) >>> 0;

let crcTable: Uint32Array | null = null;

/** CRC-32 as ZIP, gzip and PNG use it (reflected, polynomial 0xEDB88320). */
export function crc32(data: Uint8Array): number {
  if (crcTable === null) {
    crcTable = new Uint32Array(256);
    for (let byte = 0; byte < 256; byte++) {
      let value = byte;
      for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
      crcTable[byte] = value >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let index = 0; index < data.length; index++) crc = crcTable[(crc ^ data[index]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * MS-DOS date and time, in local time as extractors read them back. The format starts in 1980,
 * ends in 2107 and counts seconds in twos, so dates outside are clamped to its ends.
 */
function dosDateTime(date: Date): { date: number; time: number } {
  if (Number.isNaN(date.getTime())) throw new Error('zip: the modification date is not a valid date');
  const year = date.getFullYear();
  if (year < 1980) return { date: (1 << 5) | 1, time: 0 };
  if (year > 2107) return { date: (127 << 9) | (12 << 5) | 31, time: (23 << 11) | (59 << 5) | 29 };
  return {
    date: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
    time: (date.getHours() << 11) | (date.getMinutes() << 5) | (date.getSeconds() >> 1),
  };
}

/** Refuses names that would escape the folder an archive is extracted into, or that an extractor would take for a folder. */
function checkName(name: string): void {
  if (name === '') throw new Error('zip: a file has an empty name');
  if (name.startsWith('/') || name.startsWith('\\')) throw new Error(`zip: "${name}" is an absolute path; names must be relative`);
  // Backslashes count as separators too: extractors on Windows treat them as such.
  if (name.split(/[/\\]/).includes('..')) throw new Error(`zip: "${name}" has a ".." segment`);
  if (name.endsWith('/')) throw new Error(`zip: "${name}" ends in "/", which extractors read as a folder`);
}

/** The archive as bytes; `modified` stamps every entry (now by default). */
export function zipFiles(files: ZipEntry[], modified: Date = new Date()): Uint8Array {
  if (files.length > MAX_ENTRIES) throw new Error(`zip: ${files.length} files, more than the ${MAX_ENTRIES} a ZIP without ZIP64 can hold`);
  const encoder = new TextEncoder();
  const seen = new Set<string>();
  // Everything is checked and sized before any byte is written or hashed, so an oversized input fails fast.
  const entries = files.map((file) => {
    checkName(file.name);
    if (seen.has(file.name)) throw new Error(`zip: "${file.name}" appears more than once`);
    seen.add(file.name);
    const name = encoder.encode(file.name);
    if (name.length > 0xffff) throw new Error(`zip: the name "${file.name.slice(0, 40)}…" is longer than 65535 bytes`);
    const data = typeof file.content === 'string' ? encoder.encode(file.content) : file.content;
    return { label: file.name, name, data, offset: 0 };
  });
  let localSize = 0;
  let centralSize = 0;
  for (const entry of entries) {
    entry.offset = localSize;
    localSize += LOCAL_HEADER + entry.name.length + entry.data.byteLength;
    centralSize += CENTRAL_HEADER + entry.name.length;
    if (localSize > MAX_32) throw new Error(`zip: the archive passes 4 GiB at "${entry.label}", more than a ZIP without ZIP64 can hold`);
  }
  const total = localSize + centralSize + END_OF_CENTRAL_DIRECTORY;
  if (total > MAX_32) throw new Error('zip: the archive would be larger than 4 GiB, more than a ZIP without ZIP64 can hold');

  const { date, time } = dosDateTime(modified);
  const bytes = new Uint8Array(total);
  const view = new DataView(bytes.buffer);
  let at = 0;
  const u16 = (value: number) => {
    view.setUint16(at, value, true);
    at += 2;
  };
  const u32 = (value: number) => {
    view.setUint32(at, value, true);
    at += 4;
  };
  const put = (chunk: Uint8Array) => {
    bytes.set(chunk, at);
    at += chunk.length;
  };
  // The fields local and central headers share, from "version needed" to "extra field length".
  const common = (entry: (typeof entries)[number], crc: number) => {
    u16(VERSION);
    u16(FLAG_UTF8_NAMES);
    u16(0); // STORED
    u16(time);
    u16(date);
    u32(crc);
    u32(entry.data.byteLength);
    u32(entry.data.byteLength);
    u16(entry.name.length);
    u16(0);
  };

  const crcs = entries.map((entry) => {
    const crc = crc32(entry.data);
    u32(0x04034b50);
    common(entry, crc);
    put(entry.name);
    put(entry.data);
    return crc;
  });
  entries.forEach((entry, index) => {
    u32(0x02014b50);
    u16(MADE_BY);
    common(entry, crcs[index]!);
    u16(0); // comment length
    u16(0); // disk number
    u16(0); // internal attributes
    u32(FILE_ATTRIBUTES);
    u32(entry.offset);
    put(entry.name);
  });
  u32(0x06054b50);
  u16(0);
  u16(0);
  u16(entries.length);
  u16(entries.length);
  u32(centralSize);
  u32(localSize);
  u16(0);
  return bytes;
}
