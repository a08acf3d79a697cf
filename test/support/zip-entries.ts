/**
 * Reads the entries of a ZIP archive of STORED files (what the UI's export writes) through its
 * central directory, checking each local header's name, so a test can assert what a download holds.
 */
export function storedZipEntries(archive: Buffer): { name: string; content: Buffer }[] {
  const end = archive.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (end < 0) throw new Error('no end-of-central-directory record: not a ZIP archive');
  const count = archive.readUInt16LE(end + 10);
  let at = archive.readUInt32LE(end + 16);
  const entries: { name: string; content: Buffer }[] = [];
  for (let index = 0; index < count; index++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error(`central directory entry ${index} has a bad signature`);
    const method = archive.readUInt16LE(at + 10);
    const size = archive.readUInt32LE(at + 20);
    const nameLength = archive.readUInt16LE(at + 28);
    const extraLength = archive.readUInt16LE(at + 30);
    const commentLength = archive.readUInt16LE(at + 32);
    const local = archive.readUInt32LE(at + 42);
    const name = archive.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    if (method !== 0) throw new Error(`${name}: compressed (method ${method}); only stored entries are read here`);
    const localName = archive.subarray(local + 30, local + 30 + archive.readUInt16LE(local + 26)).toString('utf8');
    if (localName !== name) throw new Error(`${name}: the local header names ${localName}`);
    const data = local + 30 + archive.readUInt16LE(local + 26) + archive.readUInt16LE(local + 28);
    entries.push({ name, content: archive.subarray(data, data + size) });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
