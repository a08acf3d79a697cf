// The check runs under a PATH of its own (the stand-in, Node and the system's tools), whatever GPU the machine has.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoModelsDir, userCacheDir } from '../../src/main/core/paths';
import { requireEngine } from '../support/engine';
import { isolatedDataDir, useTempDirs } from '../support/temp';

const root = path.join(import.meta.dirname, '..', '..');
// The constructed nvidia-smi stand-in (test/fixtures/nvidia-smi/README.md): a GPU box whose engine cannot be a CUDA one.
const standIn = path.join(root, 'test', 'fixtures', 'nvidia-smi', 'bin');
const tempDir = useTempDirs();

/** Runs the GPU check as a lent machine would, with its output and exit code. */
function gpuCheck(env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [path.join(root, 'scripts', 'device', 'gpu-check.sh')], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('the GPU check script (scripts/device/gpu-check.sh), run before any GPU is lent', () => {
  it('exits 1 and names every step that failed: here both setups, cut off by their time limit, and so every run', async () => {
    const env = {
      HOME: process.env.HOME,
      PATH: [standIn, path.dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
      OUT: tempDir(),
      GPU_CHECK_CACHE: tempDir(),
      GPU_CHECK_DATA: tempDir(),
      GPU_CHECK_SETUP_S: '0.1',
      GPU_CHECK_IDLE_S: '1',
    };
    const { code, output } = await gpuCheck(env);
    expect(code, output).toBe(1);
    expect(output).toMatch(/^gpu-check: FAILED: planned setup: /m);
    expect(output).toMatch(/^gpu-check: 3 step\(s\) failed: planned setup; cpu setup; runs$/m);
    expect(output).not.toMatch(/every step attempted succeeded/);
  });

  it(
    'runs end to end with the nvidia-smi stand-in: falls back to the CPU engine, says so, and prints its one table',
    { timeout: 480_000 },
    async () => {
      await requireEngine();
      const out = tempDir();
      const data = isolatedDataDir(demoModelsDir());
      try {
        // Only the stand-in, Node and the system's own tools: no GPU tool of this machine's, no CUDA toolkit from /usr/local.
        const pathDirs = [standIn, path.dirname(process.execPath), '/usr/bin', '/bin'];
        const env = {
          HOME: process.env.HOME,
          PATH: [...new Set(pathDirs)].join(':'),
          OUT: out,
          GPU_CHECK_CACHE: userCacheDir(),
          GPU_CHECK_DATA: data,
          // Shortened: the stand-in's idle loop, the run and the quantization windows prove the path, not the figures.
          GPU_CHECK_RUN_S: '2',
          GPU_CHECK_IDLE_S: '1',
          GPU_CHECK_QUANT_REQUESTS: '2',
          GPU_CHECK_QUANT_REPEATS: '1',
        };
        const { code, output } = await gpuCheck(env);
        expect(code, output).toBe(0);

        expect(output).toMatch(/^gpu-check: NVIDIA-GeForce-RTX-4090, driver 580\.95\.05$/m);
        // The engine setup left, as the product reports it: a CPU one here; on a real GPU box with the CUDA
        // runtime, setup may keep its CUDA engine under the stand-in too, and then there is nothing to fall back from.
        const backend = JSON.parse(fs.readFileSync(path.join(out, 'doctor-planned.json'), 'utf8')).engine.backend as string;
        const lines = output.split('\n');
        const header = lines.findIndex((line) => /^backend +offload +TTFT/.test(line));
        expect(header, output).toBeGreaterThan(0);
        const row = lines[header + 1]!;
        if (backend === 'cuda') {
          expect(output).not.toMatch(/setup gave a \w+ engine, not CUDA/);
          expect(output).toMatch(/^backend +cuda$/m);
          expect(row).toMatch(/^cuda +\w+/);
        } else {
          expect(output).toMatch(
            /^gpu-check: setup gave a cpu engine, not CUDA, on this NVIDIA machine; its row measures the cpu, not the GPU/m,
          );
          expect(output).toMatch(
            /^ {2}inferlab setup: (WARNING: )?THE ENGINE WILL RUN ON THE CPU|^ {2}inferlab setup: WARNING: THIS MACHINE HAS AN NVIDIA GPU/im,
          );
          // The engine's own startup log, explained.
          expect(output).toMatch(/^backend +cpu$/m);
          // The one table: its header and the CPU engine's row, with figures, not dashes, where a CPU engine has them;
          // the GPU's draw is context there, never energy per token of tokens the CPU made.
          expect(row).toMatch(/^cpu \(no CUDA\) +none +\d+\.\d{2} +\d+\.\d{3} /);
          expect(row).toMatch(/ \d+ \(GPU, not the run\) +— \(engine not on the GPU\) /);
        }
        // `server explain` read the engine's own startup log: its backend, and the address it listened on.
        const explained = fs.readFileSync(path.join(out, `explain-${backend}.txt`), 'utf8');
        expect(explained).toMatch(new RegExp(`^backend +${backend}$`, 'm'));
        expect(explained).toMatch(/^listening +127\.0\.0\.1:39871$/m);
        expect(output).toMatch(/^gpu-check: every step attempted succeeded$/m);
        const seconds = Number(/^gpu-check: (\d+) s; files in /m.exec(output)?.[1]);
        expect(seconds).toBeLessThanOrEqual(480);

        // The captures a lent machine would hand back, each under its source header.
        for (const file of ['table-NVIDIA-GeForce-RTX-4090-580.95.05.txt', 'list-NVIDIA-GeForce-RTX-4090-580.95.05.txt'])
          expect(fs.readFileSync(path.join(out, 'captured', 'nvidia-smi', file), 'utf8')).toMatch(
            /^# source: .*\n# captured: .*\n# command: .*\n# ---\n/,
          );
        expect(fs.readFileSync(path.join(out, 'captured', 'llama-logs', `${backend}-NVIDIA-GeForce-RTX-4090.log`), 'utf8')).toMatch(
          /listening on/,
        );
        // The quantization experiment ran to its end: a row of figures for each quantization, and a recommendation.
        const quant = fs.readFileSync(path.join(out, `quant-${backend}.txt`), 'utf8');
        for (const name of ['f16', 'q8_0', 'q4_k_m'])
          expect(quant).toMatch(new RegExp(`^${name} +2 +\\d[\\d.]* ms +\\S.* +\\d[\\d.]* ms +\\d[\\d.]* +`, 'm'));
        expect(quant).toMatch(/^recommendation: \S+/m);
      } finally {
        fs.rmSync(data, { recursive: true, force: true });
      }
    },
  );
});
