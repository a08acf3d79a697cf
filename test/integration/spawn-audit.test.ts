import childProcess from 'node:child_process';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerProfile } from '../../src/shared/contract';
import { ErrorCode } from '../../src/shared/errors';
import { AppError } from '../../src/main/core/errors';
import { buildLlamaServerArgs, defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { createServices, type ServiceContainer } from '../../src/main/services';
import { requireEngine } from '../support/engine';
import { taskEnd } from '../support/tasks';
import { useTempDirs } from '../support/temp';

/**
 * Every process started while the services handle hostile requests and one real run, seen
 * at the OS edge: `child_process` itself is wrapped (named imports included, through
 * syncBuiltinESMExports), so no code path can start a process unseen.
 */
interface Launch {
  api: string;
  file: string;
  args: readonly string[];
  shell: boolean;
  stack: string;
}

const launches: Launch[] = [];
const APIS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
const originals = new Map<string, unknown>();

function record(api: string, file: unknown, rest: unknown[]): void {
  const argv = Array.isArray(rest[0]) ? (rest[0] as string[]) : [];
  const options = (Array.isArray(rest[0]) ? rest[1] : rest[0]) as { shell?: unknown } | undefined;
  // exec and execSync always run their string through a shell.
  const shell = api === 'exec' || api === 'execSync' || Boolean(options && typeof options === 'object' && options.shell);
  launches.push({ api, file: String(file), args: argv, shell, stack: new Error().stack ?? '' });
}

beforeAll(() => {
  const target = childProcess as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const api of APIS) {
    const original = target[api]!;
    originals.set(api, original);
    target[api] = function (this: unknown, file: unknown, ...rest: unknown[]) {
      record(api, file, rest);
      return original.call(this, file, ...rest);
    };
  }
  syncBuiltinESMExports();
});

afterAll(() => {
  const target = childProcess as unknown as Record<string, unknown>;
  for (const [api, original] of originals) target[api] = original;
  syncBuiltinESMExports();
});

const tempDir = useTempDirs();

describe('processes started on behalf of requests', () => {
  let container: ServiceContainer;
  beforeAll(async () => {
    container = await createServices({ dbPath: path.join(tempDir(), 'audit.db') });
  });
  afterAll(async () => {
    await container?.dispose();
  });

  it("launches only the configured engine with the profile's own argv, never through a shell, however hostile the request", async () => {
    const engine = await requireEngine();
    const victim = path.join(tempDir(), 'victim');
    fs.writeFileSync(victim, 'keep me');
    const base = { ...defaultProfile('audit'), contextSize: 1024, threads: 1 };
    // Each request is refused as invalid input, for the reason the profile rules give, before anything is launched.
    const hostile: [ServerProfile, string, RegExp][] = [
      [
        { ...base, extraFlags: ['--log-file', victim] },
        'extraFlags',
        /--log-file is not allowed: Infer Lab sets the server's logging itself/,
      ],
      [{ ...base, extraFlags: ['--rpc', '10.0.0.1:50052'] }, 'extraFlags', /--rpc is not allowed: it changes how the server is reached/],
      [{ ...base, extraFlags: ['--lora', victim] }, 'extraFlags', /--lora is set by Infer Lab; use the profile field loraAdapter/],
      [
        { ...base, extraFlags: ['--chat-template-file', victim] },
        'extraFlags',
        /--chat-template-file is not allowed: it changes the chat template/,
      ],
      [{ ...base, extraFlags: ['-mu', 'http://127.0.0.1:9/x.gguf'] }, 'extraFlags', /-mu is not allowed: it changes which model is served/],
      [
        { ...base, threads: '1; touch /tmp/inferlab-pwned' as unknown as number },
        'threads',
        /threads must be an integer from 1 to 4096, got "1; touch \/tmp\/inferlab-pwned"/,
      ],
      [{ ...base, name: '$(touch /tmp/inferlab-pwned)' }, 'name', /name must be 1-64 letters, digits, dots, dashes or underscores/],
    ];
    for (const [profile, field, reason] of hostile) {
      const refusal = await container.services.servers.start('demo:q8_0', profile, { force: true }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refusal, JSON.stringify(profile)).toBeInstanceOf(AppError);
      expect((refusal as AppError).code).toBe(ErrorCode.InvalidInput);
      expect((refusal as AppError).message).toMatch(/^Server profile ".*" is not valid:/);
      expect((refusal as AppError).message).toMatch(reason);
      const problems = ((refusal as AppError).details as { problems: { field: string }[] }).problems;
      expect(problems.map((problem) => problem.field)).toEqual([field]);
    }
    await expect(container.services.servers.start('demo:q8_0; touch /tmp/inferlab-pwned', base, { force: true })).rejects.toMatchObject({
      code: ErrorCode.InvalidInput,
      message: expect.stringMatching(/^Unknown demo model "demo:q8_0; touch \/tmp\/inferlab-pwned"; expected one of demo:/),
    });
    // Asking the engine for its version is the only launch so far.
    const serving = () => launches.filter((launch) => launch.file === engine.serverPath && !launch.args.includes('--version'));
    expect(serving()).toEqual([]);

    // One real run through the same services.
    const finished = taskEnd(container.events, 'run');
    await container.services.servers.saveProfile(base);
    await container.services.runs.start({
      workload: 'chat-short',
      model: 'demo:q8_0',
      endpoint: null,
      profileName: 'audit',
      concurrency: 1,
      rate: null,
      requests: 2,
      durationS: null,
      warmup: 0,
      private: false,
      // Another llama-server on the machine must not turn this run into a refusal: the audit is about what is launched.
      force: true,
    });
    const state = await finished;
    expect(state.error).toBeNull();
    await container.services.doctor.report();

    const servers = serving();
    expect(servers).toHaveLength(1);
    const args = [...servers[0]!.args];
    const port = Number(args[args.indexOf('--port') + 1]);
    const modelPath = args[args.indexOf('-m') + 1]!;
    expect(args).toEqual(buildLlamaServerArgs(modelPath, port, base));
    expect(fs.readFileSync(victim, 'utf8')).toBe('keep me');
    expect(fs.existsSync('/tmp/inferlab-pwned')).toBe(false);

    // Our code never uses a shell. systeminformation (OS, CPU and GPU facts for doctor and run
    // manifests) runs its own fixed command lines through one; nothing of a request reaches them.
    const ours = launches.filter((launch) => !/node_modules[\\/]systeminformation/.test(launch.stack));
    expect(ours.filter((launch) => launch.shell).map((launch) => `${launch.api} ${launch.file}`)).toEqual([]);
    const programs = new Set(ours.map((launch) => launch.file));
    // Besides the engine and Node: the GPU samplers, and the fixed probes doctor plans the engine from.
    const machineTools = ['nvidia-smi', 'amd-smi', 'rocm-smi', 'ldconfig', 'vulkaninfo'];
    for (const program of programs)
      expect([engine.serverPath, process.execPath].includes(program) || machineTools.includes(path.basename(program)), program).toBe(true);
    console.log(
      `[spawn audit] ${launches.length} launches: ${[...new Set(launches.map((launch) => `${launch.api} ${path.basename(launch.file.split(' ')[0]!)}${launch.shell ? ' (shell)' : ''}`))].join(', ')}`,
    );
  });
});
