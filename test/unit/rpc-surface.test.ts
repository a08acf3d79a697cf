import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { startHeadlessServer, type HeadlessServer } from '../../src/main/headless';
import { createServices, type ServiceContainer } from '../../src/main/services';
import { rpcAccess, type ServiceAccess } from '../../src/main/services/access';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { MAX_INPUT_FILE_BYTES } from '../../src/main/core/read-capped';
import { openDatabase } from '../../src/main/store/database';
import { RunStore } from '../../src/main/store/run-store';
import type { TaskProgress } from '../../src/shared/contract';
import { taskIsOver } from '../../src/shared/tasks';
import { demoRunSpec } from '../support/specs';
import { storeSampleRun, writeRunExport } from '../support/stored-run';
import { useTempDirs } from '../support/temp';
import { writeValidTinyModel } from '../support/hostile-gguf';

/**
 * The RPC face as an attacker holding the UI would use it: a WebSocket client with the token,
 * against the real services on a real SQLite file. The CLI may name any path; RPC may not.
 */
const tempDir = useTempDirs();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Face {
  call(
    service: string,
    method: string,
    ...args: unknown[]
  ): Promise<{ ok: boolean; result?: unknown; error?: { code: string; message: string } }>;
  container: ServiceContainer;
  dataDir: string;
  access: ServiceAccess;
}

/**
 * Calls the service over and over while `call` runs, and measures the longest time no call
 * was answered: a service that holds its thread for one piece of work is silent for as long.
 */
async function silencesDuring(face: Face, call: () => ReturnType<Face['call']>) {
  const started = performance.now();
  let finished = false;
  const pending = call().finally(() => (finished = true));
  const answeredAt = [started];
  while (!finished) {
    await face.call('servers', 'defaultProfile');
    answeredAt.push(performance.now());
  }
  const reply = await pending;
  const took = performance.now() - started;
  const longestSilence = Math.max(...answeredAt.slice(1).map((at, index) => at - answeredAt[index]!));
  console.log(
    `a call of ${Math.round(took)} ms; ${answeredAt.length - 1} calls answered meanwhile, the longest silence ${Math.round(longestSilence)} ms`,
  );
  return { reply, took, longestSilence };
}

const STALL_MS = 250;

/**
 * Stands in for a network mount that stalls (this machine has none): while `work` runs, every
 * read of a file takes STALL_MS, holding the thread that asked for it, as a stalled read(2) does.
 */
async function withStalledReads<T>(work: () => Promise<T>): Promise<T> {
  const readSync = fs.readSync;
  vi.spyOn(fs, 'readSync').mockImplementation((...args: Parameters<typeof fs.readSync>) => {
    const until = performance.now() + STALL_MS;
    while (performance.now() < until);
    return readSync(...args);
  });
  const probe = await fs.promises.open(process.execPath);
  const handlePrototype = Object.getPrototypeOf(probe) as { read: (...args: unknown[]) => Promise<unknown> };
  await probe.close();
  const read = handlePrototype.read;
  vi.spyOn(handlePrototype, 'read').mockImplementation(async function (this: unknown, ...args: unknown[]) {
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    return read.apply(this, args);
  });
  try {
    return await work();
  } finally {
    vi.restoreAllMocks();
  }
}

/**
 * Stands in for a network mount whose metadata calls stall (this machine has none): while `work`
 * runs, every open, stat, access, realpath and folder listing of a path under `mounts` takes
 * STALL_MS. A synchronous one holds the thread that asked, as a stalled stat(2) does; an
 * asynchronous one delays only its caller, as it does on Node's I/O pool.
 */
async function withStalledMetadata<T>(mounts: string[], work: () => Promise<T>): Promise<T> {
  const onMount = (file: unknown) => mounts.some((mount) => String(file).startsWith(mount));
  const syncCalls = ['realpathSync', 'statSync', 'lstatSync', 'existsSync', 'accessSync', 'openSync', 'readdirSync'] as const;
  for (const name of syncCalls) {
    const original = fs[name] as (...args: unknown[]) => unknown;
    vi.spyOn(fs, name).mockImplementation(((...args: unknown[]) => {
      const until = performance.now() + (onMount(args[0]) ? STALL_MS : 0);
      while (performance.now() < until);
      return original(...args);
    }) as never);
  }
  const asyncCalls = ['realpath', 'stat', 'lstat', 'access', 'open', 'readdir'] as const;
  for (const name of asyncCalls) {
    const original = fs.promises[name] as (...args: unknown[]) => Promise<unknown>;
    vi.spyOn(fs.promises, name).mockImplementation((async (...args: unknown[]) => {
      if (onMount(args[0])) await new Promise((resolve) => setTimeout(resolve, STALL_MS));
      return original(...args);
    }) as never);
  }
  try {
    return await work();
  } finally {
    vi.restoreAllMocks();
  }
}

async function rpcFace(config: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Face> {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { recursive: true });
  fs.writeFileSync(path.join(dataDir, 'config.json'), JSON.stringify(config));
  const access = rpcAccess({ ...process.env, ...env, INFERLAB_DATA_DIR: dataDir });
  const container = await createServices({ dbPath: path.join(dataDir, 'inferlab.db'), access });
  const rendererDir = path.join(dir, 'renderer');
  fs.mkdirSync(rendererDir);
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html>');
  const server: HeadlessServer = await startHeadlessServer({
    container,
    rendererDir,
    host: '127.0.0.1',
    port: 0,
    tokenFile: path.join(dataDir, 'serve-token'),
    log: () => {},
  });
  const token = new URL(server.url).searchParams.get('token')!;
  const socket = new WebSocket(`ws://127.0.0.1:${server.port}/rpc?token=${token}`);
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  cleanups.push(async () => {
    socket.close();
    await server.close();
    await container.dispose();
  });
  let next = 1;
  return {
    container,
    dataDir,
    access,
    call: (service, method, ...args) =>
      new Promise((resolve) => {
        const id = next++;
        const onMessage = (data: WebSocket.RawData) => {
          const message = JSON.parse(data.toString()) as { id?: number; ok: boolean };
          if (message.id !== id) return;
          socket.off('message', onMessage);
          resolve(message);
        };
        socket.on('message', onMessage);
        socket.send(JSON.stringify({ id, service, method, args }));
      }),
  };
}

describe('workloads.list over RPC', () => {
  it('lists the built-ins, then the files saved in <data>/workloads by the path a form sends, a broken one with its problem, never a link out', async () => {
    const face = await rpcFace();
    const workloads = path.join(face.dataDir, 'workloads');
    fs.mkdirSync(workloads);
    fs.writeFileSync(
      path.join(workloads, 'short-documents.yaml'),
      'name: short-docs\ngroups: [{ name: needle, items: [{ id: a, prompt: hi }] }]\n',
    );
    fs.writeFileSync(
      path.join(workloads, 'broken.yaml'),
      'name: broken\ngroups:\n  - name: g\n    items: [{ id: a, prompt: x, colour: red }]\n',
    );
    fs.writeFileSync(path.join(workloads, 'notes.txt'), 'not a workload');
    // A dataset too large to parse on every list: named, not read.
    fs.writeFileSync(path.join(workloads, 'dataset.jsonl'), `{"prompt": "${'x'.repeat(2 * 1024 * 1024)}"}\n`);
    const outside = path.join(tempDir(), 'secret.yaml');
    fs.writeFileSync(outside, 'name: secret\ngroups: [{ name: g, items: [{ id: a, prompt: "PRIVATE-MARKER" }] }]\n');
    fs.symlinkSync(outside, path.join(workloads, 'link.yaml'));

    const reply = await face.call('workloads', 'list');
    expect(reply.ok).toBe(true);
    const listed = reply.result as { name: string; file: string; description: string; groups: string[]; builtin: boolean }[];
    expect(listed.filter((workload) => workload.builtin).map((workload) => workload.name)).toContain('chat-short');
    expect(listed.findIndex((workload) => !workload.builtin)).toBeGreaterThan(listed.findLastIndex((workload) => workload.builtin));
    const saved = listed.filter((workload) => !workload.builtin);
    expect(saved.map((workload) => path.basename(workload.file))).toEqual(['broken.yaml', 'dataset.jsonl', 'short-documents.yaml']);
    expect(saved[1]).toMatchObject({ name: 'dataset', description: '2.0 MiB; checked when a run uses it' });
    saved.splice(1, 1);
    expect(saved[1]).toMatchObject({
      name: 'short-docs',
      groups: ['needle'],
      file: fs.realpathSync(path.join(workloads, 'short-documents.yaml')),
    });
    expect(saved[0]).toMatchObject({ name: 'broken', groups: [] });
    expect(saved[0]!.description).toBe('cannot be used: line 4: groups[0].items[0].colour: unknown field "colour"');
    expect(JSON.stringify(listed)).not.toContain('secret');
    // The file it lists is what the forms send, and a run resolves it.
    expect((await face.call('workloads', 'read', saved[1]!.file)).ok).toBe(true);
  });
});

describe('over RPC, no method reads or writes an arbitrary path', () => {
  it('refuses files outside the roots, symlinks out of them included, and serves what is inside', async () => {
    const face = await rpcFace();
    const outside = path.join(tempDir(), 'secret.yaml');
    fs.writeFileSync(outside, 'name: secret\ngroups: [{ name: g, items: [{ id: a, prompt: "PRIVATE-MARKER" }] }]\n');

    for (const file of ['/etc/passwd', path.join(os.homedir(), '.ssh', 'id_rsa'), '/dev/zero', outside]) {
      const reply = await face.call('workloads', 'read', file);
      expect(reply.ok, file).toBe(false);
      expect(reply.error!.code, file).toBe('forbidden');
      expect(reply.error!.message).toMatch(/outside the folders this interface may use for a workload file/);
      expect(JSON.stringify(reply)).not.toContain('PRIVATE-MARKER');
    }
    // A link placed inside a root does not lead out of it.
    const workloads = path.join(face.dataDir, 'workloads');
    fs.mkdirSync(workloads);
    fs.symlinkSync(outside, path.join(workloads, 'link.yaml'));
    expect((await face.call('workloads', 'read', path.join(workloads, 'link.yaml'))).error?.code).toBe('forbidden');
    // Built-ins and files under <data>/workloads are served.
    expect((await face.call('workloads', 'read', 'chat-short')).ok).toBe(true);
    fs.copyFileSync(outside, path.join(workloads, 'mine.yaml'));
    expect((await face.call('workloads', 'read', path.join(workloads, 'mine.yaml'))).ok).toBe(true);

    // Models: scanning a folder, quantizing, starting a server, a run and an experiment all check the model path first.
    expect((await face.call('models', 'scan', ['/etc'])).error?.code).toBe('forbidden');
    expect((await face.call('models', 'quantize', '/etc/passwd', ['Q4_0'])).error?.code).toBe('forbidden');
    const profile = await face.call('servers', 'defaultProfile');
    expect((await face.call('servers', 'start', '/etc/passwd', profile.result, { force: false })).error?.code).toBe('forbidden');
    // The Python servers' flags pass no allow-list yet: over RPC they are not launched at all.
    expect((await face.call('servers', 'start', 'some/model', profile.result, { engine: 'vllm' })).error?.code).toBe('forbidden');
    const run = demoRunSpec({ model: '/etc/passwd', concurrency: null, requests: 1 });
    expect((await face.call('runs', 'start', run)).error?.code).toBe('forbidden');
    expect((await face.call('runs', 'start', { ...run, model: 'demo:q8_0', workload: outside })).error?.code).toBe('forbidden');
    const experiment = {
      kind: 'quant',
      model: 'demo:f16',
      quants: [],
      files: [
        { name: 'a', path: '/etc/passwd' },
        { name: 'b', path: '/etc/hosts' },
      ],
      workload: 'chat-short',
      repeats: 1,
      requestsPerWindow: null,
    };
    expect((await face.call('experiments', 'start', experiment)).error?.code).toBe('forbidden');
    // An evaluation text is a file too.
    const withText = {
      kind: 'quant',
      model: 'demo:f16',
      quants: ['f16', 'q8_0'],
      workload: 'chat-short',
      repeats: 1,
      requestsPerWindow: null,
      kldTextFile: '/etc/passwd',
    };
    expect((await face.call('experiments', 'start', withText)).error).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/outside the folders this interface may use for a text file/),
    });
  });

  it('refuses a workload inside the roots whose generator reads a file outside them (ShareGPT, trace)', async () => {
    const face = await rpcFace();
    const workloads = path.join(face.dataDir, 'workloads');
    fs.mkdirSync(workloads, { recursive: true });
    const secrets = tempDir();
    fs.writeFileSync(path.join(secrets, 'secret.json'), '[{"conversations": [{"from": "human", "value": "PRIVATE-MARKER"}]}]');
    fs.writeFileSync(path.join(secrets, 'secret.jsonl'), 'PRIVATE-MARKER\n');
    const run = (workload: string) => demoRunSpec({ workload, concurrency: null, requests: 1 });
    for (const [name, generator] of [
      ['sharegpt.yaml', `sharegpt: { file: ${JSON.stringify(path.join(secrets, 'secret.json'))} }`],
      ['trace.yaml', `trace: { file: ${JSON.stringify(path.relative(workloads, path.join(secrets, 'secret.jsonl')))} }`],
    ]) {
      const file = path.join(workloads, name!);
      fs.writeFileSync(file, `name: leak\ngroups:\n  - name: g\n    generate: { ${generator} }\n`);
      // The form's check says why; starting is refused.
      const checked = await face.call('runs', 'validate', run(file));
      expect((checked.result as { problem: string | null }).problem, name).toMatch(
        /outside the folders this interface may use for a workload file/,
      );
      const started = await face.call('runs', 'start', run(file));
      expect(started.ok, name).toBe(false);
      expect(started.error!.code, name).toBe('forbidden');
      for (const reply of [checked, started]) expect(JSON.stringify(reply)).not.toContain('PRIVATE-MARKER');
    }
    // A trace file given directly as the workload is held to the same roots.
    expect((await face.call('runs', 'start', run(path.join(secrets, 'secret.jsonl')))).error?.code).toBe('forbidden');
  });

  it('refuses, before its job opens, an experiment whose workload shows images to servers given no projector', async () => {
    const face = await rpcFace();
    const workloads = path.join(face.dataDir, 'workloads');
    fs.mkdirSync(workloads, { recursive: true });
    fs.writeFileSync(path.join(workloads, 'photo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    const file = path.join(workloads, 'pictures.yaml');
    fs.writeFileSync(
      file,
      'name: pictures\ngroups:\n  - name: g\n    items:\n      - id: look\n        messages: [{ role: user, content: hi }]\n        images: [{ file: photo.png }]\n',
    );
    const spec = { kind: 'quant', model: 'demo:f16', quants: ['f16', 'q8_0'], workload: file, repeats: 2, requestsPerWindow: 2 };
    const refused = await face.call('experiments', 'start', spec);
    expect(refused.error).toMatchObject({
      code: 'invalid_input',
      message: expect.stringMatching(/workload item "look" shows images, but the profile names no image projector/),
    });
    // Nothing was stored: the refusal came before the job opened.
    expect((await face.call('experiments', 'list')).result).toEqual([]);
  });

  it("refuses a workload inside the roots whose item shows an image file outside them: its bytes would go to the server and into the run's store", async () => {
    const face = await rpcFace();
    const workloads = path.join(face.dataDir, 'workloads');
    fs.mkdirSync(workloads, { recursive: true });
    const secrets = tempDir();
    // A PNG signature, then the secret: an image check alone would pass it.
    fs.writeFileSync(
      path.join(secrets, 'secret.png'),
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from('PRIVATE-MARKER')]),
    );
    const file = path.join(workloads, 'pictures.yaml');
    fs.writeFileSync(
      file,
      `name: leak\ngroups:\n  - name: g\n    items:\n      - id: a\n        messages: [{ role: user, content: hi }]\n        images: [{ file: ${JSON.stringify(path.relative(workloads, path.join(secrets, 'secret.png')))} }]\n`,
    );
    const run = demoRunSpec({ workload: file, concurrency: null, requests: 1, settings: ['projector=demo:mmproj'] });
    const checked = await face.call('runs', 'validate', run);
    expect((checked.result as { problem: string | null }).problem).toMatch(
      /outside the folders this interface may use for a workload file/,
    );
    const started = await face.call('runs', 'start', run);
    expect(started.error?.code).toBe('forbidden');
    for (const reply of [checked, started]) expect(JSON.stringify(reply)).not.toContain('PRIVATE-MARKER');
  });

  it('refuses a race of a workload item outside the roots, or of an item whose image lies outside them, before any lane runs', async () => {
    const face = await rpcFace();
    const secrets = tempDir();
    const outside = path.join(secrets, 'secret.yaml');
    fs.writeFileSync(outside, 'name: secret\ngroups: [{ name: g, items: [{ id: a, prompt: "PRIVATE-MARKER" }] }]\n');
    fs.writeFileSync(
      path.join(secrets, 'secret.png'),
      Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.from('PRIVATE-MARKER')]),
    );
    const workloads = path.join(face.dataDir, 'workloads');
    fs.mkdirSync(workloads, { recursive: true });
    const pictures = path.join(workloads, 'pictures.yaml');
    fs.writeFileSync(
      pictures,
      `name: leak\ngroups:\n  - name: g\n    items:\n      - id: a\n        messages: [{ role: user, content: hi }]\n        images: [{ file: ${JSON.stringify(path.join(secrets, 'secret.png'))} }]\n`,
    );
    // A link placed inside a root leads out of it no more than the path itself.
    fs.symlinkSync(outside, path.join(workloads, 'link.yaml'));
    const lanes = [{ model: 'demo:q8_0' }, { model: 'demo:q4_k_m' }];
    for (const workload of [outside, path.join(workloads, 'link.yaml'), pictures, '/etc/passwd']) {
      const reply = await face.call('runs', 'startRace', { lanes, item: { workload, id: 'a' }, maxTokens: 4, together: false });
      expect(reply.error?.code, workload).toBe('forbidden');
      expect(reply.error!.message).toMatch(/outside the folders this interface may use for a workload file/);
      expect(JSON.stringify(reply)).not.toContain('PRIVATE-MARKER');
    }
    // Refused before the task opened: no race ran.
    expect((await face.call('tasks', 'list')).result).toEqual([]);
  });
  it('refuses a profile whose LoRA adapter lies outside the model roots, however the profile arrives', async () => {
    const face = await rpcFace();
    const secrets = tempDir();
    const adapter = path.join(secrets, 'secret.gguf');
    fs.writeFileSync(adapter, 'PRIVATE-MARKER');
    const profile = { ...(await face.container.servers.defaultProfile()), loraAdapter: adapter };
    const replies = [
      await face.call('servers', 'start', 'demo:q4_k_m', profile, {}),
      await face.call('runs', 'start', demoRunSpec({ settings: [`loraAdapter=${adapter}`], requests: 1 })),
      await face.call('runs', 'start', demoRunSpec({ settings: [`lora=${adapter}`], requests: 1 })),
      // The second of a list: every adapter a server loads is held to the roots.
      await face.call('runs', 'start', demoRunSpec({ settings: [`loraAdapter=demo:lora,${adapter}@0.5`], requests: 1 })),
      await face.call('experiments', 'start', {
        kind: 'sweep',
        model: 'demo:q4_k_m',
        workload: 'chat-short',
        vary: { field: 'loraAdapter', values: ['none', adapter] },
        loadConcurrencies: [1],
        repeats: 2,
        requestsPerWindow: 2,
      }),
      await face.call('experiments', 'start', {
        kind: 'adapter',
        model: 'demo:q4_k_m',
        workload: 'chat-short',
        adapters: [{ file: 'demo:lora' }, { file: adapter }],
        repeats: 2,
        requestsPerWindow: 2,
      }),
      // The base a plan checks adapters against is read from its header: the path is held to the roots first.
      await face.call('models', 'plan', { source: 'hf:acme/tiny-GGUF', adapterFor: adapter }),
    ];
    for (const [index, reply] of replies.entries()) {
      expect(reply.error?.code, `${index}: ${reply.error?.message}`).toBe('forbidden');
      expect(JSON.stringify(reply)).not.toContain('PRIVATE-MARKER');
    }
  });

  it('refuses a profile whose draft model lies outside the model roots, however the profile arrives', async () => {
    const face = await rpcFace();
    const secrets = tempDir();
    const draft = path.join(secrets, 'secret.gguf');
    fs.writeFileSync(draft, 'PRIVATE-MARKER');
    const profile = { ...(await face.container.servers.defaultProfile()), draftModel: draft };
    const replies = [
      await face.call('servers', 'start', 'demo:q4_k_m', profile, {}),
      await face.call('runs', 'start', demoRunSpec({ settings: [`draftModel=${draft}`], requests: 1 })),
      await face.call('experiments', 'start', {
        kind: 'sweep',
        model: 'demo:q4_k_m',
        workload: 'chat-short',
        vary: { field: 'draftModel', values: ['none', draft] },
        loadConcurrencies: [1],
        repeats: 2,
        requestsPerWindow: 2,
      }),
      await face.call('experiments', 'start', {
        kind: 'speculative',
        model: 'demo:f16',
        workload: 'chat-short',
        draftModel: draft,
        repeats: 2,
        requestsPerWindow: 2,
      }),
    ];
    for (const [index, reply] of replies.entries()) {
      expect(reply.error?.code, `${index}: ${reply.error?.message}`).toBe('forbidden');
      expect(JSON.stringify(reply)).not.toContain('PRIVATE-MARKER');
    }
  });

  it('writes quantizations only inside the roots: a model granted through the dialog opens that file, not its folder', async () => {
    const face = await rpcFace();
    const folder = tempDir();
    const model = path.join(folder, 'granted-f16.gguf');
    fs.copyFileSync(await resolveModelRef('demo:f16'), model);
    await face.access.paths.grant(model, 'model');

    const quantize = await face.call('models', 'quantize', model, ['Q4_0']);
    expect(quantize.error).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/granted-q4_0\.gguf is outside the folders/),
    });
    const experiment = await face.call('experiments', 'start', {
      kind: 'quant',
      model,
      quants: ['f16', 'q8_0'],
      workload: 'chat-short',
      repeats: 2,
      requestsPerWindow: 2,
    });
    expect(experiment.error).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/granted-q8_0\.gguf is outside the folders/),
    });
    expect(fs.readdirSync(folder)).toEqual(['granted-f16.gguf']);
  });

  it('imports a run folder only from inside the results roots: not outside, not through a symlink out, not a huge file', async () => {
    const face = await rpcFace();
    const source = new RunStore(openDatabase(path.join(tempDir(), 'source.db')));
    const runId = storeSampleRun(source);
    const outside = writeRunExport(source, runId, path.join(tempDir(), 'secret-export'));
    fs.writeFileSync(path.join(tempDir(), 'marker'), 'PRIVATE-MARKER');
    const results = path.join(face.dataDir, 'results');
    fs.mkdirSync(results);
    const refused = async (folder: string, code: string, message: RegExp) => {
      const reply = await face.call('runs', 'importRun', folder);
      expect(reply.ok, folder).toBe(false);
      expect(reply.error, folder).toMatchObject({ code, message: expect.stringMatching(message) });
      expect(JSON.stringify(reply)).not.toContain('PRIVATE-MARKER');
    };
    const forbidden = /outside the folders this interface may use for a run export .*roots\.results/;

    for (const folder of [outside, '/etc', os.homedir()]) await refused(folder, 'forbidden', forbidden);
    // A link to a folder outside, and a folder inside whose file links outside.
    fs.symlinkSync(outside, path.join(results, 'linked-folder'));
    await refused(path.join(results, 'linked-folder'), 'forbidden', forbidden);
    const linkedFile = path.join(results, 'linked-file');
    fs.cpSync(outside, linkedFile, { recursive: true });
    const secretLines = path.join(tempDir(), 'requests.jsonl');
    fs.writeFileSync(secretLines, 'PRIVATE-MARKER\n');
    fs.rmSync(path.join(linkedFile, 'requests.jsonl'));
    fs.symlinkSync(secretLines, path.join(linkedFile, 'requests.jsonl'));
    await refused(linkedFile, 'forbidden', forbidden);
    // A file inside the roots larger than any export is refused from its size, before it is read.
    const huge = path.join(results, 'huge');
    fs.cpSync(outside, huge, { recursive: true });
    fs.truncateSync(path.join(huge, 'requests.jsonl'), MAX_INPUT_FILE_BYTES + 1);
    await refused(huge, 'invalid_input', /requests\.jsonl: the exported requests\.jsonl is \d+ bytes, over the 256 MiB/);
    expect((await face.call('runs', 'list')).result).toEqual([]);

    // The same files inside the roots come in, marked with where they came from.
    const inside = path.join(results, 'run');
    fs.cpSync(outside, inside, { recursive: true });
    expect(await face.call('runs', 'importRun', inside)).toMatchObject({ ok: true, result: { runId, requests: 3, importedFrom: inside } });
    expect((await face.call('runs', 'list')).result).toMatchObject([{ runId, importedFrom: inside }]);
  });

  it('writes a Parquet export only inside the results roots, and never through a link planted there', async () => {
    const face = await rpcFace();
    const results = path.join(face.dataDir, 'results');
    fs.mkdirSync(results);
    // Outside the roots: a folder of the caller's choosing, where manifest.json could replace someone's file.
    const victim = tempDir();
    fs.writeFileSync(path.join(victim, 'manifest.json'), 'PRIVATE-MARKER');
    const refused = async (folder: string) => {
      const reply = await face.call('runs', 'exportParquet', { folder });
      expect(reply, folder).toMatchObject({
        ok: false,
        error: { code: 'forbidden', message: expect.stringMatching(/outside the folders this interface may use for a run export/) },
      });
    };
    await refused(victim);
    await refused(path.join(victim, 'new'));
    fs.symlinkSync(victim, path.join(results, 'linked'));
    await refused(path.join(results, 'linked'));
    expect(fs.readdirSync(victim)).toEqual(['manifest.json']);
    // A link planted inside the roots under a temporary file's name is replaced, not written through.
    const target = path.join(results, 'mine');
    fs.mkdirSync(target);
    fs.symlinkSync(path.join(victim, 'manifest.json'), path.join(target, 'runs.parquet.partial'));
    fs.symlinkSync(path.join(victim, 'manifest.json'), path.join(target, 'manifest.json.partial'));
    expect(await face.call('runs', 'exportParquet', { folder: target })).toMatchObject({ ok: true, result: { folder: target } });
    expect(fs.readFileSync(path.join(victim, 'manifest.json'), 'utf8')).toBe('PRIVATE-MARKER');
    expect(fs.readdirSync(target).sort()).toEqual([
      'chunks.parquet',
      'conditions.parquet',
      'decisions.parquet',
      'experiments.parquet',
      'manifest.json',
      'requests.parquet',
      'runs.parquet',
      'telemetry.parquet',
      'verdicts.parquet',
    ]);
    // Without a folder, a new one under the first results root.
    const fresh = await face.call('runs', 'exportParquet', {});
    expect(fresh).toMatchObject({ ok: true, result: { folder: expect.stringMatching(new RegExp(`^${results}/parquet-`)) } });
  });

  it('answers other calls while it reads a large import', async () => {
    const face = await rpcFace();
    const source = new RunStore(openDatabase(path.join(tempDir(), 'source.db')));
    const folder = writeRunExport(source, storeSampleRun(source), path.join(face.dataDir, 'results', 'large'));
    // 20,000 request lines, each checked on its own: seconds of work the service must not stall behind.
    const file = path.join(folder, 'requests.jsonl');
    const line = JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[0]!) as Record<string, unknown>;
    fs.writeFileSync(file, Array.from({ length: 20_000 }, (_, seq) => `${JSON.stringify({ ...line, seq })}\n`).join(''));

    const order: string[] = [];
    const imported = face.call('runs', 'importRun', folder).then((reply) => order.push(`import ${reply.ok}`));
    const answered = face.call('servers', 'defaultProfile').then((reply) => order.push(`profile ${reply.ok}`));
    await Promise.all([imported, answered]);
    expect(order).toEqual(['profile true', 'import true']);
  });

  it('keeps answering while a workload file sits on a stalled disk: no silence takes a third of the read', async () => {
    const face = await rpcFace();
    const workloads = path.join(face.dataDir, 'workloads');
    fs.mkdirSync(workloads);
    const file = path.join(workloads, 'on-a-slow-mount.yaml');
    fs.writeFileSync(file, `name: slow\ndescription: ${'x'.repeat(3 * 1024 * 1024)}\ngroups: []\n`);
    const { reply, took, longestSilence } = await withStalledReads(() => silencesDuring(face, () => face.call('workloads', 'read', file)));
    expect(reply.ok, JSON.stringify(reply.error)).toBe(true);
    expect(took).toBeGreaterThanOrEqual(4 * STALL_MS);
    // Read on the service's thread, each stalled read is a silence, and all of them one.
    expect(longestSilence, `the longest silence was ${Math.round(longestSilence)} ms of a ${Math.round(took)} ms read`).toBeLessThan(
      took / 3,
    );
  });

  it('keeps answering while it scans a model folder on a stalled disk: no silence takes a third of the scan', async () => {
    const models = tempDir();
    for (const name of ['a', 'b', 'c']) writeValidTinyModel(path.join(models, `${name}.gguf`));
    const face = await rpcFace({ roots: { models: [models] } });
    const { reply, took, longestSilence } = await withStalledReads(() => silencesDuring(face, () => face.call('models', 'scan', [models])));
    expect(reply.ok, JSON.stringify(reply.error)).toBe(true);
    expect((reply.result as { models: { valid: boolean }[] }).models.map((model) => model.valid)).toEqual([true, true, true]);
    expect(took).toBeGreaterThanOrEqual(3 * STALL_MS);
    expect(longestSilence, `the longest silence was ${Math.round(longestSilence)} ms of a ${Math.round(took)} ms scan`).toBeLessThan(
      took / 3,
    );
  });

  it('keeps answering while it parses a large telemetry.json: no silence takes half the import', async () => {
    const face = await rpcFace();
    const source = new RunStore(openDatabase(path.join(tempDir(), 'source.db')));
    const folder = writeRunExport(source, storeSampleRun(source), path.join(face.dataDir, 'results', 'long-telemetry'));
    // A day of sampling at 4 Hz in three series (about 40 MiB of JSON): one JSON.parse and one schema pass over every point.
    const points = Array.from({ length: 350_000 }, (_, index) => [index * 250, (index % 1000) / 10]);
    const series = ['gpu0.mem_used_mib', 'gpu0.util_pct', 'host.cpu_pct'].map((name) => ({ series: name, unit: '', points }));
    fs.writeFileSync(path.join(folder, 'telemetry.json'), JSON.stringify({ schema_version: 1, clock: 'ms', series }));

    const { reply, took, longestSilence } = await silencesDuring(face, () => face.call('runs', 'importRun', folder));
    expect(reply.ok, JSON.stringify(reply.error)).toBe(true);
    // Parsed on the service's thread, the parse and schema pass are one silence of most of the import.
    expect(longestSilence, `the longest silence was ${Math.round(longestSilence)} ms of a ${Math.round(took)} ms import`).toBeLessThan(
      took / 2,
    );
    const { telemetry } = await face.container.runs.get((reply.result as { runId: string }).runId);
    expect(telemetry.map((entry) => [entry.series, entry.points.length])).toEqual(series.map((entry) => [entry.series, 350_000]));
    expect(telemetry[0]!.points[349_999]).toEqual([349_999 * 250, 99.9]);
  });

  it('keeps answering while every call that names a path resolves it on a stalled mount: no silence reaches one stalled call', async () => {
    const models = tempDir();
    const stalled = await rpcFace({ roots: { models: [models] } });
    writeValidTinyModel(path.join(models, 'tiny.gguf'));
    writeValidTinyModel(path.join(models, 'tiny-q4_0.gguf'));
    fs.writeFileSync(path.join(models, 'not-a-model.gguf'), 'text, not GGUF');
    const workload = path.join(stalled.dataDir, 'workloads', 'slow.yaml');
    fs.mkdirSync(path.dirname(workload), { recursive: true });
    fs.writeFileSync(workload, 'name: slow\ngroups: []\n');
    const source = new RunStore(openDatabase(path.join(tempDir(), 'source.db')));
    // Two runs: the unstalled first call imports one, the stalled call the other.
    const exports = [1, 2].map((index) =>
      writeRunExport(source, storeSampleRun(source), path.join(stalled.dataDir, 'results', `run-${index}`)),
    );

    // Each call names paths and gets as far as checking and reading them; those that would start a server are refused after the checks.
    const calls: [string, () => ReturnType<Face['call']>, (reply: Awaited<ReturnType<Face['call']>>) => void][] = [
      ['workloads.read', () => stalled.call('workloads', 'read', workload), (reply) => expect(reply.ok).toBe(true)],
      ['models.scan', () => stalled.call('models', 'scan', [models]), (reply) => expect(reply.ok).toBe(true)],
      [
        'runs.importRun',
        () => stalled.call('runs', 'importRun', exports.shift()),
        (reply) => expect(reply.ok, JSON.stringify(reply.error)).toBe(true),
      ],
      [
        'runs.start of a missing model',
        () => stalled.call('runs', 'start', { ...demoRunSpec(), model: path.join(models, 'missing.gguf') }),
        (reply) => expect(reply.error?.message).toMatch(/Model file not found/),
      ],
      [
        'experiments.start with --files',
        () =>
          stalled.call('experiments', 'start', {
            kind: 'quant',
            model: '',
            quants: [],
            repeats: 1,
            requestsPerWindow: null,
            files: [
              { name: 'a', path: path.join(models, 'tiny.gguf') },
              { name: 'b', path: path.join(models, 'not-a-model.gguf') },
            ],
            workload: 'chat-short',
          }),
        (reply) => expect(reply.error?.message).toMatch(/is not a GGUF file/),
      ],
      [
        'models.quantize onto an existing file',
        () => stalled.call('models', 'quantize', path.join(models, 'tiny.gguf'), ['Q4_0']),
        (reply) => expect(reply.error?.message).toMatch(/refusing to overwrite/),
      ],
    ];
    const silences: string[] = [];
    for (const [name, call, expectReply] of calls) {
      // Once unstalled first: the test runner loads modules a call imports lazily with synchronous reads of its own.
      await silencesDuring(stalled, call);
      const { reply, took, longestSilence } = await withStalledMetadata([models, stalled.dataDir], () => silencesDuring(stalled, call));
      expectReply(reply);
      expect(took, name).toBeGreaterThanOrEqual(STALL_MS);
      // One stalled synchronous call on the service's thread is a silence of STALL_MS.
      if (longestSilence >= STALL_MS / 2) silences.push(`${name}: ${Math.round(longestSilence)} ms of a ${Math.round(took)} ms call`);
    }
    expect(silences, 'calls during which the service fell silent').toEqual([]);
  }, 120_000);

  it('uses the folders the config file adds', async () => {
    const models = tempDir();
    const face = await rpcFace({ roots: { models: [models] } });
    const reply = await face.call('models', 'scan', [models]);
    expect(reply.ok).toBe(true);
    expect((await face.call('models', 'scan', [path.dirname(models)])).error?.code).toBe('forbidden');
  });
});

describe('over RPC, the API key goes only to the endpoint configured for it', () => {
  /** An endpoint that records each request's Authorization header, at `host` (another machine's address, where one stands in). */
  async function recordingEndpoint(host = '127.0.0.1'): Promise<{ url: string; authorizations: (string | null)[] }> {
    const authorizations: (string | null)[] = [];
    const server = http.createServer((request, response) => {
      authorizations.push(request.headers.authorization ?? null);
      response.writeHead(500).end();
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    return { url: `http://${host}:${(server.address() as { port: number }).port}`, authorizations };
  }

  const RUN = demoRunSpec({ model: null, endpoint: 'http://127.0.0.1:9/v1', concurrency: null, requests: 1 });

  async function runAgainst(face: Face, endpoint: string): Promise<void> {
    const finished = new Promise<void>((resolve) =>
      face.container.events.on((event) => {
        const progress = event.payload as TaskProgress;
        if (event.name === 'task.progress' && progress.kind === 'run' && taskIsOver(progress.phase)) resolve();
      }),
    );
    const reply = await face.call('runs', 'start', { ...RUN, endpoint });
    expect(reply.ok, reply.error?.message).toBe(true);
    await finished;
  }

  it('sends nothing to an endpoint a request names, and the configured key to the configured endpoint', async () => {
    const attacker = await recordingEndpoint();
    const configured = await recordingEndpoint();
    const face = await rpcFace(
      { endpointKeys: [{ endpoint: `${configured.url}/v1`, env: 'TEAM_KEY' }] },
      { TEAM_KEY: 'team-secret', INFERLAB_API_KEY: 'user-secret' },
    );
    const previous = process.env.INFERLAB_API_KEY;
    // The key the CLI would send sits in this process's environment too.
    process.env.INFERLAB_API_KEY = 'user-secret';
    try {
      await runAgainst(face, `${attacker.url}/v1`);
      await runAgainst(face, `${configured.url}/v1`);
    } finally {
      if (previous === undefined) delete process.env.INFERLAB_API_KEY;
      else process.env.INFERLAB_API_KEY = previous;
    }
    expect(attacker.authorizations.length).toBeGreaterThan(0);
    expect(attacker.authorizations.every((value) => value === null)).toBe(true);
    expect(configured.authorizations.length).toBeGreaterThan(0);
    expect(configured.authorizations.every((value) => value === 'Bearer team-secret')).toBe(true);
  });

  it("sends nothing to a host other than this machine's loopback unless the config file names it", async (context) => {
    // This machine's own network address stands in for another host: the service treats it as one.
    const address = Object.values(os.networkInterfaces())
      .flat()
      .find((entry) => entry?.family === 'IPv4' && !entry.internal)?.address;
    if (!address) return context.skip('this machine has no non-loopback IPv4 address to stand in for another host');
    const other = await recordingEndpoint(address);
    const face = await rpcFace();
    for (const endpoint of [`${other.url}/v1`, 'http://169.254.169.254/latest', 'http://metadata.google.internal/v1']) {
      const reply = await face.call('runs', 'start', { ...RUN, endpoint });
      expect(reply.error, endpoint).toMatchObject({
        code: 'forbidden',
        message: expect.stringMatching(/is not an endpoint this interface may send requests to .*"roots\.endpoints"/),
      });
    }
    expect(other.authorizations).toEqual([]);
    // Named in the config file, it is run against.
    await runAgainst(await rpcFace({ roots: { endpoints: [other.url] } }), `${other.url}/v1`);
    expect(other.authorizations.length).toBeGreaterThan(0);
  });

  it('refuses a request that names a key variable, or a metrics URL on another host', async () => {
    const face = await rpcFace();
    const run = RUN;
    const named = await face.call('runs', 'start', { ...run, apiKeyEnv: 'HOME' });
    expect(named.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/cannot name an API-key variable/) });
    const probe = await face.call('runs', 'start', { ...run, metricsUrl: 'http://169.254.169.254/latest/meta-data' });
    expect(probe.error).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/metricsUrl must be on the endpoint's own host/),
    });
    // A GPU exporter has its own port on the serving machine, but no other host.
    const gpuProbe = await face.call('runs', 'start', { ...run, gpuMetricsUrl: 'http://169.254.169.254:9400/metrics' });
    expect(gpuProbe.error).toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/gpuMetricsUrl must be on the endpoint's own host \(any port\)/),
    });
    const managed = await face.call('runs', 'start', {
      ...run,
      endpoint: null,
      model: 'demo:q8_0',
      gpuMetricsUrl: 'http://127.0.0.1:9400/metrics',
    });
    expect(managed.error).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/gpuMetricsUrl must be on the endpoint/) });
  });
});
