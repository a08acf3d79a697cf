import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demoModelsDir } from '../../src/main/core/paths';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { inferlab, startInferlab } from '../support/cli';
import { packagesLoadedBy } from '../support/loaded-packages';
import { requireEngine } from '../support/engine';
import { CAPTURED_DIR } from '../support/captured';
import { storeSampleRun } from '../support/stored-run';
import { startStandInHub, tinyGgufRepoFiles } from '../support/stand-in-hub';
import { isolatedDataDir, useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

// Commands docs/USAGE.md lists that need no measurement: each is run as a person would, from the CLI.
describe('inferlab commands that manage stored things', () => {
  const dataDir = isolatedDataDir(demoModelsDir());
  const env = { INFERLAB_DATA_DIR: dataDir };
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('server profile save, show, save --from, list and delete, with errors that name the profile', async () => {
    const db = path.join(tempDir(), 'profiles.db');
    const cli = (args: string[]) => inferlab(['server', 'profile', ...args, '--db', db], env);
    const saved = await cli(['save', 'long', '--set', 'contextSize=16384']);
    expect(saved.code).toBe(0);
    expect(saved.stderr).toMatch(/saved server profile long/);
    const shown = await cli(['show', 'long']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^contextSize\s+16384\s/m);
    await cli(['save', 'long-two-threads', '--from', 'long', '--set', 'threads=1']);
    const listed = JSON.parse((await cli(['list', '--json'])).stdout) as { name: string; contextSize: number; threads: number }[];
    expect(listed.find((profile) => profile.name === 'long-two-threads')).toMatchObject({ contextSize: 16384, threads: 1 });

    expect((await cli(['delete', 'long'])).code).toBe(0);
    const gone = await cli(['show', 'long']);
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/No server profile named "long"\. Saved profiles: default, long-two-threads/);
    const kept = await cli(['delete', 'default']);
    expect(kept.code).toBe(2);
    expect(kept.stderr).toMatch(/The default profile cannot be deleted/);
    const bad = await cli(['save', 'broken', '--set', 'contextSize=lots']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/contextSize/);
  });

  it('runs list loads only what listing needs: not the schema checker, the Parquet writer or the hub client', () => {
    const db = path.join(tempDir(), 'runs.db');
    const runId = storeSampleRun(new RunStore(openDatabase(db)));
    const heavy = ['ajv', 'hyparquet-writer', '@huggingface/hub'];
    // Each cost every command 50–60 ms to load (docs/PERFORMANCE.md, "Start-up").
    const listed = packagesLoadedBy(['runs', 'list', '--db', db]);
    expect(listed.code).toBe(0);
    expect(listed.packages).toContain('better-sqlite3');
    for (const name of heavy) expect([...listed.packages]).not.toContain(name);
    const folder = path.join(tempDir(), 'export');
    const exported = packagesLoadedBy(['export', runId, '--out', folder, '--db', db]);
    expect(exported.code).toBe(0);
    for (const name of heavy) expect([...exported.packages]).not.toContain(name);
    // The same harness sees the schema checker where it is used: an import checks the exported files against the schema.
    const imported = packagesLoadedBy(['import', folder, '--db', path.join(tempDir(), 'other.db')]);
    expect(imported.code).toBe(0);
    expect(imported.packages).toContain('ajv');
  });

  it('runs list --limit shows the newest runs first; runs delete removes one run and its requests, and says so', async () => {
    const db = path.join(tempDir(), 'runs.db');
    const store = new RunStore(openDatabase(db));
    const ids = [storeSampleRun(store), storeSampleRun(store), storeSampleRun(store)];
    const listAll = async () => JSON.parse((await inferlab(['runs', 'list', '--db', db, '--json'])).stdout) as { run_id: string }[];
    const all = await listAll();
    expect(all.map((run) => run.run_id).sort()).toEqual([...ids].sort());

    const limited = await inferlab(['runs', 'list', '--limit', '2', '--db', db, '--json']);
    expect(limited.code).toBe(0);
    expect((JSON.parse(limited.stdout) as { run_id: string }[]).map((run) => run.run_id)).toEqual(all.slice(0, 2).map((run) => run.run_id));
    const badLimit = await inferlab(['runs', 'list', '--limit', '0', '--db', db]);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toMatch(/--limit/);

    const victim = ids[1]!;
    expect(store.countRequests(victim)).toBeGreaterThan(0);
    const deleted = await inferlab(['runs', 'delete', victim, '--db', db]);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout + deleted.stderr).toMatch(new RegExp(victim.slice(0, 8)));
    expect((await listAll()).map((run) => run.run_id).sort()).toEqual([ids[0], ids[2]].sort());
    expect(store.countRequests(victim)).toBe(0);
    const again = await inferlab(['runs', 'delete', victim, '--db', db]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/No run/);
  });

  it('models quantize --out writes the quantized file into that folder, and refuses a path that is not a folder', async () => {
    const out = tempDir();
    const result = await inferlab(['models', 'quantize', 'demo:f16', '--to', 'Q4_0', '--out', out, '--json'], env);
    expect(result.code, result.stderr).toBe(0);
    const [made] = JSON.parse(result.stdout) as { path: string; quantization: string; valid: boolean; sizeBytes: number }[];
    expect(made).toMatchObject({ path: path.join(out, 'demo-q4_0.gguf'), quantization: 'Q4_0', valid: true });
    expect(fs.statSync(made!.path).size).toBe(made!.sizeBytes);
    const refused = await inferlab(['models', 'quantize', 'demo:f16', '--to', 'Q4_0', '--out', '/dev/null/x'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/the output folder \/dev\/null\/x is not a folder/);
  });

  it('models plan reads a hub repository by range and fits it to the GPU nvidia-smi lists, and refuses mistakes with the flag named', async () => {
    const hub = await startStandInHub({ repos: { 'tiny/Tiny-GGUF': { files: tinyGgufRepoFiles() } } });
    try {
      // The recorded nvidia-smi stand-in: one RTX 4090, 5,120 of 24,564 MiB used.
      const planEnv = {
        ...env,
        HF_ENDPOINT: hub.url,
        HF_HOME: tempDir(),
        PATH: `${path.join(__dirname, '..', 'fixtures', 'nvidia-smi', 'bin')}:${process.env.PATH}`,
      };
      const text = await inferlab(['models', 'plan', 'hf:tiny/Tiny-GGUF', '--quants', 'F16,Q4_K_M', '--ctx', '8192'], planEnv);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/^Plan for hf:tiny\/Tiny-GGUF \(revision main\): 8,192 tokens per slot × 1 slot/);
      expect(text.stdout).toMatch(/GPU 0: NVIDIA GeForce RTX 4090: 19\.0 GiB free of 24\.0 GiB; 1008 GB\/s \(datasheet/);
      expect(text.stdout).toMatch(/^F16\s+.*fits \(5\/5 layers\)\s+8,192\s+\d+/m);
      const json = await inferlab(
        ['models', 'plan', 'hf:tiny/Tiny-GGUF', '--quants', 'all', '--parallel', '2', '--kv', 'q8_0', '--json'],
        planEnv,
      );
      expect(json.code, json.stderr).toBe(0);
      const plan = JSON.parse(json.stdout) as { settings: { parallel: number; kvType: string }; candidates: { label: string }[] };
      expect(plan.settings).toMatchObject({ parallel: 2, kvType: 'q8_0' });
      // The projector beside the weights is a row of its own, labelled by its file name.
      expect(plan.candidates.map((candidate) => candidate.label).sort()).toEqual(['F16', 'F32', 'Q4_K_M', 'mmproj-Tiny-F16']);
      for (const [args, message] of [
        [['--ctx', '100'], /--ctx must be a whole number from 256 to 4194304, got "100"/],
        [['--kv', 'q5_1'], /--kv must be one of f16, q8_0, q4_0, got "q5_1"/],
        [['--quants', ','], /--quants expects labels like Q4_K_M,Q8_0 or "all"/],
      ] as const) {
        const refused = await inferlab(['models', 'plan', 'hf:tiny/Tiny-GGUF', ...args], planEnv);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(message);
      }
      const none = await inferlab(['models', 'plan'], planEnv);
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/models plan needs one source/);
      const missing = await inferlab(['models', 'plan', 'hf:tiny/Tiny-GGUF', '--quants', 'Q2_K'], planEnv);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/no Q2_K in hf:tiny\/Tiny-GGUF; it has F16, mmproj-Tiny-F16, F32, Q4_K_M/);
    } finally {
      await hub.close();
    }
  });

  it('models pull downloads into the Hugging Face cache with plain progress lines off a terminal, resumes nothing twice, and refuses mistakes', async () => {
    const files = tinyGgufRepoFiles();
    const hub = await startStandInHub({ repos: { 'tiny/Tiny-GGUF': { files } }, redirectToCdn: true });
    try {
      const cache = path.join(tempDir(), 'hub');
      const pullEnv = { ...env, HF_ENDPOINT: hub.url, HF_HUB_CACHE: cache };
      const text = await inferlab(['models', 'pull', 'hf:tiny/Tiny-GGUF', '--quants', 'Q4_K_M,F16'], pullEnv);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stderr).toMatch(/^pulling F16\/Tiny-F16-00001-of-00002\.gguf \(\d+ MiB\)$/m);
      expect(text.stderr).toMatch(/^pulling Tiny-Q4_K_M\.gguf \(11 MiB\)$/m);
      expect(text.stderr).not.toContain('\r');
      expect(text.stdout).toMatch(/^hf:tiny\/Tiny-GGUF at 0123456789ab \(main\): \d+ MiB downloaded into /);
      expect(text.stdout).toMatch(/^F16\s+\d+ MiB\s+\S+Tiny-F16-00001-of-00002\.gguf \(\+1 parts\)\s+pulled, SHA-256 checked$/m);
      const snapshot = path.join(cache, 'models--tiny--Tiny-GGUF', 'snapshots', '0123456789abcdef0123456789abcdef01234567');
      expect(fs.readFileSync(path.join(snapshot, 'Tiny-Q4_K_M.gguf')).equals(files['Tiny-Q4_K_M.gguf']!)).toBe(true);

      const again = await inferlab(['models', 'pull', 'hf:tiny/Tiny-GGUF', '--quants', 'q4_k_m', '--json'], pullEnv);
      expect(again.code, again.stderr).toBe(0);
      const pulled = JSON.parse(again.stdout) as { downloadedBytes: number; models: { label: string; alreadyCached: boolean }[] };
      expect(pulled).toMatchObject({ downloadedBytes: 0, models: [{ label: 'Q4_K_M', alreadyCached: true }] });

      for (const [args, message] of [
        [
          ['hf:tiny/Tiny-GGUF'],
          /hf:tiny\/Tiny-GGUF has 4 files to pull \(F16, mmproj-Tiny-F16, F32, Q4_K_M\): name the ones to pull with --quants, or --quants all/,
        ],
        [['hf:tiny/Tiny-GGUF', '--quants', 'Q2_K'], /hf:tiny\/Tiny-GGUF has no Q2_K; it has F16, mmproj-Tiny-F16, F32, Q4_K_M/],
        [['tiny/Tiny-GGUF'], /models pull needs one hub name: hf:OWNER\/REPO\[@REVISION\]/],
        [['hf:tiny/Tiny-GGUF', '--quants', ','], /--quants expects labels like Q4_K_M,Q8_0 or "all"/],
      ] as const) {
        const refused = await inferlab(['models', 'pull', ...args], pullEnv);
        expect(refused.code, refused.stderr).toBe(2);
        expect(refused.stderr).toMatch(message);
      }
    } finally {
      await hub.close();
    }
  });

  it('models search lists hub repositories with GGUF files by name, the hf: name first, and says when none match', async () => {
    const files = tinyGgufRepoFiles();
    const hub = await startStandInHub({
      repos: { 'tiny/Tiny-GGUF': { files, downloads: 1234 }, 'tiny/Tiny-Chat-GGUF': { files, downloads: 56, gatedFor: ['t'] } },
    });
    try {
      const searchEnv = { ...env, HF_ENDPOINT: hub.url };
      const text = await inferlab(['models', 'search', 'tiny', 'gguf'], searchEnv);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout.trim().split('\n').slice(1)).toEqual([
        expect.stringMatching(/^hf:tiny\/Tiny-GGUF\s+1,234\s+0\s+2026-01-01\s+open$/),
        expect.stringMatching(/^hf:tiny\/Tiny-Chat-GGUF\s+56\s+0\s+2026-01-01\s+gated: accept the licence, set HF_TOKEN$/),
      ]);
      const none = await inferlab(['models', 'search', 'mistral'], searchEnv);
      expect([none.code, none.stdout.trim()]).toEqual([2, 'no repository with GGUF files matches "mistral"']);
      const bare = await inferlab(['models', 'search'], searchEnv);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toMatch(/models search needs words of a model's name/);
    } finally {
      await hub.close();
    }
  });

  it('server explain reads the startup log of this engine’s llama-server, from a file or standard input, and refuses what is not a log', async () => {
    const engine = await requireEngine();
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(free));
      });
    });
    // The engine's own startup log at the verbosity managed servers use.
    const server = spawn(
      engine.serverPath,
      [
        '-m',
        path.join(dataDir, 'demo-models', 'demo-q8_0.gguf'),
        '--host',
        '127.0.0.1',
        '--port',
        String(port),
        '-t',
        '1',
        '-c',
        '2048',
        '-np',
        '2',
        '-lv',
        '4',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        if (/listening on/.test(log)) resolve();
      };
      server.stdout.on('data', onData);
      server.stderr.on('data', onData);
      server.on('exit', (code) => reject(new Error(`llama-server exited (${code}) before listening:\n${log}`)));
    });
    server.kill('SIGKILL');

    const child = startInferlab(['server', 'explain', '-', '--json'], env);
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stdin.end(log);
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    const explanation = JSON.parse(stdout);
    expect(explanation.build).toMatch(new RegExp(`\\(${engine.commit!.slice(0, 7)}`));
    expect(explanation).toMatchObject({
      // Two slots share the 2048-token context: 1024 tokens per sequence.
      context: { size: 2048, perSequence: 1024, trained: 4096 },
      slots: 2,
      kvTypes: { k: 'f16', v: 'f16' },
    });
    expect(explanation.backend).toBe(engine.backend === 'cpu' ? 'cpu' : engine.backend);

    const captured = path.join(CAPTURED_DIR, 'llama-logs', 'cuda-2024-partial-offload-78of81-rtx4060ti-rtx3060.log');
    const text = await inferlab(['server', 'explain', captured], env);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^devices +CUDA0 NVIDIA GeForce RTX 4060 Ti \[used\]; CUDA1 NVIDIA GeForce RTX 3060 \[used\]$/m);
    expect(text.stdout).toMatch(/^offload +partial \(cuda\): 78\/81 layers; 3 of 81 layers stayed on the CPU/m);
    expect(text.stdout).toMatch(/^warnings:\n  MOST WEIGHTS ARE IN HOST MEMORY: 22994 of 44280 MiB \(52 %\)/m);

    const notALog = path.join(tempDir(), 'notes.txt');
    fs.writeFileSync(notALog, 'shopping list\n');
    const refused = await inferlab(['server', 'explain', notALog], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/notes\.txt: no llama\.cpp startup lines found/);
    const missing = await inferlab(['server', 'explain', path.join(tempDir(), 'absent.log')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/absent\.log: cannot read it \(ENOENT\)/);
  });
});
