import fs from 'node:fs';
import path from 'node:path';

export const CAPTURED_DIR = path.join(__dirname, '..', 'fixtures', 'captured');

/** A captured file's text without its header (the `# source:` lines up to `# ---`), as the tool printed it. */
export function readCaptured(relative: string): string {
  const text = fs.readFileSync(path.join(CAPTURED_DIR, relative), 'utf8');
  const end = text.indexOf('\n# ---\n');
  if (!text.startsWith('# source:') || end < 0)
    throw new Error(`${relative}: a captured file starts with "# source:" and ends its header with "# ---"`);
  return text.slice(end + '\n# ---\n'.length);
}

/** Every captured file of one family (a folder under test/fixtures/captured). */
export function capturedFiles(family: string): string[] {
  return fs
    .readdirSync(path.join(CAPTURED_DIR, family))
    .sort()
    .map((name) => path.join(family, name));
}
