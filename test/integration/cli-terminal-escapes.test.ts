import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { inferlab } from '../support/cli';
import { storeSampleRun, writeRunExport } from '../support/stored-run';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

// What a crafted export can carry in a name: set the window title (OSC 0 … BEL), and move up a line and erase it.
const TITLE = '\x1b]0;pwned\x07';
const ERASE_ABOVE = '\x1b[1A\x1b[2K';
// "Clear the screen" after the one-character form of ESC [ (a C1 control, which some terminals obey), and DEL.
const CLEAR = '\u009b2J\x7f';

/** An exported run whose model and workload names carry terminal controls, as someone else could make one. */
function craftedExport(source: RunStore, folder: string): string {
  writeRunExport(source, storeSampleRun(source), folder);
  const rewrite = (name: string, change: (document: Record<string, Record<string, unknown>>) => void) => {
    const file = path.join(folder, name);
    const document = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, Record<string, unknown>>;
    change(document);
    fs.writeFileSync(file, JSON.stringify(document, null, 2));
  };
  rewrite('manifest.json', (manifest) => {
    manifest.model!.ref = `demo:q8_0${TITLE}${ERASE_ABOVE}${CLEAR}B is 40 % faster`;
    manifest.workload!.name = `chat-short${ERASE_ABOVE}${TITLE}`;
  });
  rewrite('summary.json', (summary) => {
    summary.workload!.name = `chat-short${ERASE_ABOVE}${TITLE}`;
  });
  return folder;
}

// Any C0 control but the line feed, DEL, or a C1 control: what a terminal would obey.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

describe('names from an imported run on the terminal', () => {
  it('runs list, runs show and compare print no control character of a crafted import, and show it escaped', async () => {
    const dir = tempDir();
    const source = new RunStore(openDatabase(path.join(dir, 'source.db')));
    const db = path.join(dir, 'target.db');
    const runIds: string[] = [];
    for (const name of ['first', 'second']) {
      const imported = await inferlab(['import', craftedExport(source, path.join(dir, name)), '--db', db, '--json']);
      expect(imported.code, imported.stderr).toBe(0);
      runIds.push((JSON.parse(imported.stdout) as { run_id: string }).run_id);
    }
    for (const args of [
      ['runs', 'list'],
      ['runs', 'show', runIds[0]!],
      ['compare', ...runIds],
    ]) {
      const result = await inferlab([...args, '--db', db]);
      expect(result.code, result.stderr).toBe(0);
      const output = result.stdout + result.stderr;
      expect(output, args.join(' ')).not.toMatch(RAW_CONTROL);
      // The name is still there to read, its controls shown as escapes.
      expect(output, args.join(' ')).toContain('chat-short\\u001b[1A\\u001b[2K\\u001b]0;pwned\\u0007');
    }
    // --json is the same document: a JSON string reads the escapes back as the characters stored.
    const listed = await inferlab(['runs', 'list', '--db', db, '--json']);
    expect((JSON.parse(listed.stdout) as { model: string }[]).map((run) => run.model)).toEqual([
      `demo:q8_0${TITLE}${ERASE_ABOVE}${CLEAR}B is 40 % faster`,
      `demo:q8_0${TITLE}${ERASE_ABOVE}${CLEAR}B is 40 % faster`,
    ]);
  }, 60_000);
});
