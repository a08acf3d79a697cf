import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { crc32, zipFiles } from '../../src/shared/zip';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const has = (command: string) => spawnSync('which', [command]).status === 0;

interface Read {
  names: string[];
  contents: Record<string, Buffer>;
  /** Python only: per entry [flag bits, compression, date_time]. */
  details?: Record<string, [number, number, number[]]>;
}

// Python's zipfile tests every CRC and reads the headers back; unzip is the fallback where there is no Python.
const PYTHON_READER = `
import base64, json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
print(json.dumps({
  'names': z.namelist(),
  'contents': {i.filename: base64.b64encode(z.read(i)).decode() for i in z.infolist()},
  'details': {i.filename: [i.flag_bits, i.compress_type, list(i.date_time)] for i in z.infolist()},
}))
`;

function readWithIndependentTool(file: string): Read {
  if (has('python3')) {
    const run = spawnSync('python3', ['-c', PYTHON_READER, file], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const parsed = JSON.parse(run.stdout) as { names: string[]; contents: Record<string, string>; details: Read['details'] };
    const contents = Object.fromEntries(Object.entries(parsed.contents).map(([name, base64]) => [name, Buffer.from(base64, 'base64')]));
    return { names: parsed.names, contents, details: parsed.details };
  }
  const test = spawnSync('unzip', ['-t', file], { encoding: 'utf8' });
  expect(test.status, test.stdout + test.stderr).toBe(0);
  const names = spawnSync('unzip', ['-Z1', file], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  const contents = Object.fromEntries(names.map((name) => [name, spawnSync('unzip', ['-p', file, name]).stdout]));
  return { names, contents };
}

describe('ZIP writer', () => {
  it.skipIf(!has('python3') && !has('unzip'))('writes an archive an independent reader extracts byte for byte', () => {
    const binary = Uint8Array.from({ length: 300 }, (_, index) => (index * 37) & 0xff);
    const modified = new Date(2024, 4, 17, 13, 45, 31);
    const archive = zipFiles(
      [
        { name: 'runs/résumé 日本.json', content: '{"note":"ñ → 日本 ▁ 🙂"}\n' },
        { name: 'empty.txt', content: '' },
        { name: 'weights.bin', content: binary },
      ],
      modified,
    );
    const file = path.join(tempDir(), 'export.zip');
    fs.writeFileSync(file, archive);

    const read = readWithIndependentTool(file);
    expect(read.names).toEqual(['runs/résumé 日本.json', 'empty.txt', 'weights.bin']);
    expect(read.contents['runs/résumé 日本.json']!.toString('utf8')).toBe('{"note":"ñ → 日本 ▁ 🙂"}\n');
    expect(read.contents['empty.txt']!.length).toBe(0);
    expect(new Uint8Array(read.contents['weights.bin']!)).toEqual(binary);
    if (read.details) {
      for (const [flags, compression, dateTime] of Object.values(read.details)) {
        expect(flags & 0x800).toBe(0x800);
        expect(compression).toBe(0);
        // DOS time counts seconds in twos.
        expect(dateTime).toEqual([2024, 5, 17, 13, 45, 30]);
      }
    }
  });

  it('computes CRC-32 as ZIP readers check it', () => {
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(Uint8Array.of(0))).toBe(0xd202ef8d);
  });

  it('refuses names that collide, are empty or escape the extraction folder', () => {
    expect(() =>
      zipFiles([
        { name: 'a.txt', content: '1' },
        { name: 'a.txt', content: '2' },
      ]),
    ).toThrow(/"a\.txt" appears more than once/);
    expect(() => zipFiles([{ name: '', content: '' }])).toThrow(/empty name/);
    expect(() => zipFiles([{ name: '../evil.sh', content: '' }])).toThrow(/"\.\.\/evil\.sh" has a "\.\." segment/);
    expect(() => zipFiles([{ name: 'a/../../evil.sh', content: '' }])).toThrow(/"\.\." segment/);
    expect(() => zipFiles([{ name: 'a\\..\\evil.sh', content: '' }])).toThrow(/"\.\." segment/);
    expect(() => zipFiles([{ name: '/etc/passwd', content: '' }])).toThrow(/"\/etc\/passwd" is an absolute path/);
    expect(() => zipFiles([{ name: 'runs/', content: 'x' }])).toThrow(/"runs\/" ends in "\/"/);
    // Dots inside a name are not a parent segment.
    expect(() => zipFiles([{ name: 'a..b/c..', content: '' }])).not.toThrow();
  });

  it('refuses what a ZIP without ZIP64 cannot hold', () => {
    const many = Array.from({ length: 65536 }, (_, index) => ({ name: `f${index}`, content: '' }));
    expect(() => zipFiles(many)).toThrow(/65536 files, more than the 65535/);
    expect(zipFiles(many.slice(1), new Date(2020, 0, 1)).length).toBeGreaterThan(0);
    // Sizes are checked before any byte is read, so a stand-in of 4 GiB needs no memory.
    const huge = { byteLength: 2 ** 32, length: 2 ** 32 } as unknown as Uint8Array;
    expect(() => zipFiles([{ name: 'huge.bin', content: huge }])).toThrow(/passes 4 GiB at "huge\.bin"/);
  });
});
