import fs from 'node:fs';
import path from 'node:path';

/**
 * A server's log on disk, rotated when it passes `maxBytes` (one previous file kept), so a
 * chatty server running for days cannot fill the disk.
 */
export class RotatingLogFile {
  private fd: number | null;
  private size: number;

  constructor(
    readonly file: string,
    private readonly maxBytes = 10 * 1024 * 1024,
  ) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    this.fd = fs.openSync(file, 'a');
    this.size = fs.fstatSync(this.fd).size;
  }

  write(line: string): void {
    if (this.fd === null) return;
    const bytes = Buffer.from(`${line}\n`);
    if (this.size + bytes.length > this.maxBytes) this.rotate();
    try {
      fs.writeSync(this.fd!, bytes);
      this.size += bytes.length;
    } catch {
      // A full disk must not take the server down with it; the in-memory tail still has the lines.
    }
  }

  private rotate(): void {
    fs.closeSync(this.fd!);
    fs.renameSync(this.file, `${this.file}.1`);
    this.fd = fs.openSync(this.file, 'a');
    this.size = 0;
  }

  close(): void {
    if (this.fd !== null) fs.closeSync(this.fd);
    this.fd = null;
  }
}
