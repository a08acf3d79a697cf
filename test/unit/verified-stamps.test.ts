import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rememberVerified, verifiedSince } from '../../src/main/models/verified-stamps';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');
// Past the kernel's timestamp tick, so a write after this lands on a later status-change time.
const nextTick = () => new Promise((resolve) => setTimeout(resolve, 30));

/** A model-sized stand-in: a file hashed "now", whose hash is taken to have begun `settledBy` ms after its last change. */
function hashedFile(settledBy = 5000) {
  const dir = tempDir();
  const file = path.join(dir, 'demo-q8_0.gguf');
  const bytes = crypto.randomBytes(4096);
  fs.writeFileSync(file, bytes);
  const stat = fs.statSync(file);
  return { dir, file, bytes, stat, digest: sha256(bytes), hashStartedAt: stat.ctimeMs + settledBy };
}

describe('demo files remembered as verified until they change', () => {
  it('remembers a settled file, and forgets it after an in-place write of the same size with its times put back', async () => {
    const { dir, file, bytes, stat, digest, hashStartedAt } = hashedFile();
    expect(verifiedSince(dir, 'demo-q8_0.gguf', stat, digest)).toBe(false);
    rememberVerified(dir, 'demo-q8_0.gguf', stat, digest, hashStartedAt);
    expect(verifiedSince(dir, 'demo-q8_0.gguf', fs.statSync(file), digest)).toBe(true);

    // touch -r copies times to the nanosecond, as Node's utimes cannot.
    const times = path.join(dir, 'times');
    fs.writeFileSync(times, '');
    execFileSync('touch', ['-r', file, times]);
    await nextTick();
    const damaged = Buffer.from(bytes);
    damaged[100] = damaged[100]! ^ 0xff;
    fs.writeFileSync(file, damaged);
    execFileSync('touch', ['-r', times, file]);
    const now = fs.statSync(file);
    expect([now.size, now.mtimeMs, now.ino]).toEqual([stat.size, stat.mtimeMs, stat.ino]);
    expect(verifiedSince(dir, 'demo-q8_0.gguf', now, digest)).toBe(false);
  });

  it('forgets a file replaced by a rename or a new link, and never vouches for another sha256', async () => {
    const { dir, file, stat, digest, hashStartedAt } = hashedFile();
    rememberVerified(dir, 'demo-q8_0.gguf', stat, digest, hashStartedAt);
    expect(verifiedSince(dir, 'demo-q8_0.gguf', stat, sha256(Buffer.from('another model')))).toBe(false);

    await nextTick();
    fs.linkSync(file, path.join(tempDir(), 'linked.gguf'));
    expect(verifiedSince(dir, 'demo-q8_0.gguf', fs.statSync(file), digest)).toBe(false);

    rememberVerified(dir, 'demo-q8_0.gguf', fs.statSync(file), digest, Date.now() + 5000);
    expect(verifiedSince(dir, 'demo-q8_0.gguf', fs.statSync(file), digest)).toBe(true);
    await nextTick();
    const replacement = path.join(dir, 'replacement');
    fs.copyFileSync(file, replacement);
    fs.renameSync(replacement, file);
    expect(verifiedSince(dir, 'demo-q8_0.gguf', fs.statSync(file), digest)).toBe(false);
  });

  it('keeps no stamp for a file changed within a second of its hash, or changed while it was hashed', async () => {
    const recent = hashedFile(200);
    rememberVerified(recent.dir, 'demo-q8_0.gguf', recent.stat, recent.digest, recent.hashStartedAt);
    expect(verifiedSince(recent.dir, 'demo-q8_0.gguf', recent.stat, recent.digest)).toBe(false);

    const moving = hashedFile();
    await nextTick();
    fs.appendFileSync(moving.file, 'x');
    rememberVerified(moving.dir, 'demo-q8_0.gguf', moving.stat, moving.digest, moving.hashStartedAt);
    expect(fs.existsSync(path.join(moving.dir, 'demo-models.verified.json'))).toBe(false);
  });

  it('treats an unreadable stamp file as none, and rewrites it without touching a linked copy in another folder', () => {
    const { dir, stat, digest, hashStartedAt } = hashedFile();
    const stamps = path.join(dir, 'demo-models.verified.json');
    for (const garbage of ['', 'null', '[1,2]', '{"demo-q8_0.gguf": 7}', '{not json']) {
      fs.writeFileSync(stamps, garbage);
      expect(verifiedSince(dir, 'demo-q8_0.gguf', stat, digest)).toBe(false);
    }
    fs.writeFileSync(stamps, '{}');
    const other = tempDir();
    fs.linkSync(stamps, path.join(other, 'demo-models.verified.json'));
    rememberVerified(dir, 'demo-q8_0.gguf', stat, digest, hashStartedAt);
    expect(verifiedSince(dir, 'demo-q8_0.gguf', stat, digest)).toBe(true);
    expect(fs.readFileSync(path.join(other, 'demo-models.verified.json'), 'utf8')).toBe('{}');
    expect(fs.readdirSync(dir).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });
});
