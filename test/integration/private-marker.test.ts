import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { demoModelsDir } from '../../src/main/core/paths';
import { inferlab, startInferlab } from '../support/cli';
import { requireEngine } from '../support/engine';
import { useTempDirs } from '../support/temp';

/**
 * A private run keeps lengths and keyed hashes, never text. These tests plant a marker in
 * every prompt, run privately through the real CLI and llama-server — to completion, against
 * an endpoint that echoes what it was sent in its errors, and with the server killed mid-run —
 * and then search, byte for byte, everything the run could have written: the data folder
 * (database, WAL, logs), the temporary folder and an export.
 */
const MARKER = 'ZEBRA-MARKER-7f3a91';
const tempDir = useTempDirs();
const servers: http.Server[] = [];
afterAll(() => servers.forEach((server) => server.close()));

function isolated(): { root: string; env: NodeJS.ProcessEnv; db: string; workload: string } {
  const root = tempDir();
  const data = path.join(root, 'data');
  const tmp = path.join(root, 'tmp');
  fs.mkdirSync(data, { recursive: true });
  fs.mkdirSync(tmp);
  // The demo models are shared, read-only inputs; a link keeps them out of the search.
  fs.symlinkSync(demoModelsDir(), path.join(data, 'demo-models'));
  const workload = path.join(root, 'marked.yaml');
  fs.writeFileSync(
    workload,
    [
      'name: marked',
      'defaults: { max_tokens: 24, temperature: 0, ignore_eos: true }',
      'groups:',
      '  - name: g',
      '    accept: [{ json_schema: { type: object } }]',
      '    items:',
      ...Array.from(
        { length: 4 },
        (_, i) => `      - { id: m${i}, messages: [{ role: user, content: "Please repeat ${MARKER} number ${i} back to me." }] }`,
      ),
      '',
    ].join('\n'),
  );
  return {
    root,
    env: { INFERLAB_DATA_DIR: data, TMPDIR: tmp, INFERLAB_FORCE_SERVER_START: '1' },
    db: path.join(data, 'private.db'),
    workload,
  };
}

/** Every regular file under `dir` (links not followed) containing the marker, in any of the encodings text travels in. */
function filesWithMarker(dir: string): string[] {
  const needles = [Buffer.from(MARKER), Buffer.from(MARKER, 'utf16le'), Buffer.from(MARKER.toLowerCase())];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => {
      const bytes = fs.readFileSync(file);
      return needles.some((needle) => bytes.includes(needle));
    });
}

async function exportAll(root: string, env: NodeJS.ProcessEnv, db: string): Promise<void> {
  const list = await inferlab(['runs', 'list', '--db', db, '--json'], env);
  for (const run of JSON.parse(list.stdout) as { run_id: string }[]) {
    const exported = await inferlab(['export', run.run_id, '--db', db, '--out', path.join(root, 'export', run.run_id)], env);
    expect(exported.code, exported.stderr).toBe(0);
  }
}

describe('private runs leave no text behind', () => {
  it('(control) the search finds the marker after the same run when it is not private', async () => {
    const { root, env, db, workload } = isolated();
    const result = await inferlab(
      ['run', '--workload', workload, '--model', 'demo:q8_0', '--requests', '4', '--set', 'c=1024', '--db', db, '--json'],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    await exportAll(root, env, db);
    const found = filesWithMarker(root).map((file) => path.relative(root, file));
    expect(found).toContain('data/private.db');
    expect(found.some((file) => file.startsWith('export/'))).toBe(true);
  });

  it('a completed private run: only lengths and keyed hashes, in the database, logs, temp files and the export', async () => {
    const { root, env, db, workload } = isolated();
    const result = await inferlab(
      ['run', '--workload', workload, '--model', 'demo:q8_0', '--private', '--requests', '4', '--set', 'c=1024', '--db', db, '--json'],
      env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).requests.completed).toBe(4);
    await exportAll(root, env, db);
    expect(result.stdout + result.stderr).not.toContain(MARKER);
    expect(filesWithMarker(root).filter((file) => file !== workload)).toEqual([]);
  });

  it('refuses a private run on a llama-server that logs request text, and runs on one that does not', async () => {
    // Two configured engines that are the real llama-server, one started with -v as a build
    // whose launch level logs bodies would be; neither is the managed build, so both are asked.
    const engine = await requireEngine();
    const { root, env, db, workload } = isolated();
    const wrapper = (name: string, extra: string): string => {
      const file = path.join(root, 'engines', name, 'llama-server');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `#!/bin/sh\nexec '${engine.serverPath}' "$@"${extra}\n`, { mode: 0o755 });
      return file;
    };
    const args = [
      'run',
      '--workload',
      workload,
      '--model',
      'demo:q8_0',
      '--private',
      '--requests',
      '2',
      '--set',
      'c=1024',
      '--db',
      db,
      '--json',
    ];

    const refused = await inferlab(args, { ...env, INFERLAB_LLAMA_SERVER: wrapper('logs-bodies', ' -v') });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /a private run keeps prompts and outputs out of every file, but this llama-server .* wrote the (request text|streamed reply) into its log/,
    );
    expect(refused.stdout + refused.stderr).not.toContain(MARKER);
    expect(filesWithMarker(root).filter((file) => file !== workload)).toEqual([]);

    const ran = await inferlab(args, { ...env, INFERLAB_LLAMA_SERVER: wrapper('quiet', '') });
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout).requests.completed).toBe(2);
    expect(filesWithMarker(root).filter((file) => file !== workload)).toEqual([]);
  });

  it('a failed private run against an endpoint that quotes the request in its errors', async () => {
    const { root, env, db, workload } = isolated();
    const echo = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        if (request.url?.endsWith('/models'))
          return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[{"id":"echo"}]}');
        response
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `cannot handle ${body}` } }));
      });
    });
    servers.push(echo);
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(echo.address() as { port: number }).port}/v1`;
    const result = await inferlab(
      ['run', '--workload', workload, '--endpoint', url, '--private', '--requests', '4', '--db', db, '--json'],
      env,
    );
    const summary = JSON.parse(result.stdout);
    expect(summary.requests.failed).toBe(4);
    await exportAll(root, env, db);
    expect(result.stdout + result.stderr).not.toContain(MARKER);
    expect(filesWithMarker(root).filter((file) => file !== workload)).toEqual([]);
  });

  it('a private run whose server is killed mid-run: the fault tail and the records hold no text', async () => {
    const { root, env, db, workload } = isolated();
    const child = startInferlab(
      ['run', '--workload', workload, '--model', 'demo:q8_0', '--private', '--requests', '400', '--set', 'c=1024', '--db', db, '--json'],
      env,
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    let serverPid: number | null = null;
    for (let i = 0; i < 600 && serverPid === null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (!fs.existsSync(db)) continue;
      const check = new Database(db, { readonly: true, fileMustExist: true });
      try {
        const stored = (check.prepare('SELECT COUNT(*) AS n FROM requests').get() as { n: number }).n;
        const session = check.prepare('SELECT pid FROM server_sessions WHERE ended_at IS NULL').get() as { pid: number } | undefined;
        if (stored >= 2 && session) serverPid = session.pid;
      } catch {
        // Tables not created yet.
      } finally {
        check.close();
      }
    }
    expect(serverPid).not.toBeNull();
    process.kill(serverPid!, 'SIGKILL');
    expect(await exited).not.toBe(0);
    expect(stdout + stderr).toMatch(/crashed/);
    await exportAll(root, env, db);
    expect(stdout + stderr).not.toContain(MARKER);
    expect(filesWithMarker(root).filter((file) => file !== workload)).toEqual([]);
  });
});
