import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServerSnapshot } from '../../src/shared/contract/server';
import { findFreePort } from '../../src/main/core/ports';
import { identify, isAlive } from '../../src/main/core/process-identity';
import { parseNvidiaSmiGpus } from '../../src/main/engines/gpu-identity';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { createKeepAliveAgent, streamCompletion } from '../../src/main/client/stream-client';
import { ServerManager } from '../../src/main/server/server-manager';
import { DEFAULT_TIMEOUTS } from '../../src/main/server/managed-server';
import { requireEngine } from '../support/engine';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const profile = { ...defaultProfile(), contextSize: 1024 };

describe('ServerManager against the real llama-server', () => {
  it('goes starting → ready with cold-start times and the effective configuration, then stops cleanly', async () => {
    const dir = tempDir();
    // A constructed GPU reading whose every call is counted: the memory a server's footprint is measured from.
    let gpuReads = 0;
    const readGpuUsed = async () => {
      gpuReads++;
      return new Map([[0, 1000 + gpuReads]]);
    };
    const harness = await serverHarness(dir, { readGpuUsed });
    try {
      // A request refused before anything is launched does not run the GPU tool either.
      await expect(harness.servers.prepare({ modelRef: 'demo:q8_0', profile: { ...profile, parallelSlots: 0 } })).rejects.toThrow(
        /parallelSlots/,
      );
      expect(gpuReads).toBe(0);
      const server = await harness.servers.prepare({ modelRef: 'demo:q8_0', profile: { ...profile, parallelSlots: 2 } });
      // Read while the server was prepared, so the spawn does not wait for the GPU tool.
      expect(gpuReads).toBe(1);
      const states: string[] = [];
      server.changes.on((snapshot) => states.push(snapshot.state));
      const ready = await server.start();
      expect(ready.state).toBe('ready');
      expect(gpuReads).toBe(1);
      expect(ready.gpuUsedBeforeSpawnMib).toBe(1001);
      expect(states).toEqual(['starting', 'ready']);
      const cold = ready.coldStart!;
      expect(cold.spawnToListeningMs).toBeGreaterThan(0);
      expect(cold.spawnToReadyMs).toBeGreaterThanOrEqual(cold.spawnToListeningMs!);
      expect(cold.readyToFirstTokenMs).toBeGreaterThan(0);
      const effective = ready.effectiveConfig!;
      expect(effective.slots).toBe(2);
      expect(effective.contextSize).toBe(1024);
      expect(effective.contextPerSlot).toBe(512);
      expect(effective.trainedContext).toBe(4096);
      expect(effective.modelFileType).toBe('Q8_0');
      expect(effective.build).toMatch(/^b\d+-[0-9a-f]+$/);
      expect(Object.keys(effective.buffersMib).some((key) => key.endsWith('model'))).toBe(true);
      expect(effective.argv).toContain('--metrics');
      expect(harness.store.sessions.coldStart(server.id)).toEqual(cold);
      expect(fs.readFileSync(path.join(dir, 'logs', `${server.id}.log`), 'utf8')).toMatch(/listening on/);

      const pid = ready.pid!;
      const stopped = await server.stop();
      expect(stopped.state).toBe('stopped');
      expect(states.slice(-2)).toEqual(['stopping', 'stopped']);
      expect(isAlive(identify(pid))).toBe(false);

      // Started again, it reads the GPUs again: the reading begun while it was prepared stood for its first start only.
      const again = await server.start();
      expect(again.state).toBe('ready');
      expect(gpuReads).toBe(2);
      expect(again.gpuUsedBeforeSpawnMib).toBe(1002);
    } finally {
      await harness.dispose();
    }
  });

  it('reports a server killed while ready as crashed within a second, with exit signal and log tail', async () => {
    const harness = await serverHarness(tempDir());
    try {
      const server = await harness.servers.prepare({ modelRef: 'demo:q4_k_m', profile });
      const ready = await server.start();
      const crashed = new Promise<{ snapshot: ServerSnapshot; at: number }>((resolve) =>
        server.changes.on((snapshot) => snapshot.state === 'crashed' && resolve({ snapshot, at: performance.now() })),
      );
      // A process this test starts and kills beside the server, its pipes like the server's: the moment it
      // is seen to exit is when this (possibly busy) process could first know of the server's death.
      const sentinel = spawn('sleep', ['600'], { stdio: ['ignore', 'pipe', 'pipe'] });
      const sentinelSeen = new Promise<number>((resolve) => sentinel.once('close', () => resolve(performance.now())));
      process.kill(ready.pid!, 'SIGKILL');
      sentinel.kill('SIGKILL');
      const [{ snapshot, at }, seen] = await Promise.all([crashed, sentinelSeen]);
      expect(at - seen, `crash reported ${(at - seen).toFixed(0)} ms after the sentinel's exit was seen`).toBeLessThan(1000);
      expect(snapshot.fault?.code).toBe('crashed');
      expect(snapshot.fault?.signal).toBe('SIGKILL');
      expect(snapshot.fault?.logTail.length).toBeGreaterThan(0);
    } finally {
      await harness.dispose();
    }
  });

  it('retries on a new port when the chosen one is already taken', async () => {
    const blocker = net.createServer();
    const taken = await new Promise<number>((resolve) =>
      blocker.listen(0, '127.0.0.1', () => resolve((blocker.address() as net.AddressInfo).port)),
    );
    const ports = [taken];
    const harness = await serverHarness(tempDir(), { choosePort: async () => ports.shift() ?? findFreePort() });
    try {
      const server = await harness.servers.prepare({ modelRef: 'demo:q4_k_m', profile });
      const faults: string[] = [];
      const tails: string[][] = [];
      server.changes.on((snapshot) => {
        if (!snapshot.fault) return;
        faults.push(snapshot.fault.code);
        tails.push(snapshot.fault.logTail);
      });
      const ready = await server.start();
      expect(faults, JSON.stringify(tails)).toEqual(['bind_failed']);
      expect(ready.state).toBe('ready');
      expect(ready.port).not.toBe(taken);
    } finally {
      blocker.close();
      await harness.dispose();
    }
  });

  it('fails with a classified fault and nothing running for a flag value the build rejects or a missing binary', async () => {
    const harness = await serverHarness(tempDir());
    try {
      // Allowed and well-formed, so only llama-server itself can refuse it.
      const flagged = await harness.servers.start({
        modelRef: 'demo:q4_k_m',
        profile: { ...profile, extraFlags: ['--device', 'nosuchdevice'] },
      });
      expect(flagged.state).toBe('failed');
      expect(flagged.fault?.code).toBe('unsupported_flag');
      expect(flagged.fault?.logTail.join('\n')).toMatch(/invalid device: nosuchdevice/);
    } finally {
      await harness.dispose();
    }
    const dir = tempDir();
    const store = (await serverHarness(dir)).store;
    const missing = new ServerManager(
      async () => ({
        origin: 'configured',
        serverPath: path.join(dir, 'no-such-llama-server'),
        toolsDir: dir,
        version: null,
        commit: null,
        backend: null,
        build: null,
      }),
      store.sessions,
      dir,
      { timeouts: DEFAULT_TIMEOUTS, choosePort: () => findFreePort() },
    );
    const result = await missing.start({ modelRef: 'demo:q4_k_m', profile });
    expect(result.state).toBe('failed');
    expect(result.fault?.code).toBe('binary_missing');
    expect(result.fault?.hint).toMatch(/inferlab setup/);
    await missing.dispose();
    store.close();
  });

  it('refuses invalid profiles and models before launching anything', async () => {
    const harness = await serverHarness(tempDir());
    try {
      await expect(
        harness.servers.start({ modelRef: 'demo:q8_0', profile: { ...profile, cacheTypeV: 'q8_0', flashAttention: 'off' } }),
      ).rejects.toThrow(/cacheTypeV: a quantized V cache \(q8_0\) needs flashAttention on/);
      await expect(harness.servers.start({ modelRef: 'demo:q8_0', profile: { ...profile, contextSize: 8192 } })).rejects.toThrow(
        /exceeds the model's trained context \(4096\)/,
      );
      const ok = await harness.servers.start({
        modelRef: 'demo:q8_0',
        profile: { ...profile, contextSize: 8192, allowContextOverTrained: true },
      });
      expect(ok.state).toBe('ready');
      expect(harness.servers.list()).toHaveLength(1);
    } finally {
      await harness.dispose();
    }
  });

  it('confines a server to the chosen GPUs through its environment; refuses a GPU the machine lacks and an engine that cannot choose', async () => {
    // Constructed: nvidia-smi listing GPUs 0 and 1 (this machine has none), and an engine record
    // that says CUDA around the real CPU binary, which ignores the variables it is given.
    const twoGpus = async () =>
      new Map<number, number | null>([
        [0, 1024],
        [1, 1212],
      ]);
    const cuda = await serverHarness(tempDir(), { readGpuUsed: twoGpus }, async () => ({ ...(await requireEngine()), backend: 'cuda' }));
    try {
      const ready = await cuda.servers.start({ modelRef: 'demo:q8_0', profile: { ...profile, gpuDevices: '1' } });
      expect(ready.state).toBe('ready');
      // The baseline for the server's own footprint is the chosen GPU's, not both.
      expect(ready.gpuUsedBeforeSpawnMib).toBe(1212);
      const environ = fs.readFileSync(`/proc/${ready.pid}/environ`, 'utf8').split('\0');
      expect(environ).toEqual(expect.arrayContaining(['CUDA_VISIBLE_DEVICES=1', 'CUDA_DEVICE_ORDER=PCI_BUS_ID', 'HIP_VISIBLE_DEVICES=1']));
      await expect(cuda.servers.start({ modelRef: 'demo:q8_0', profile: { ...profile, gpuDevices: '1,2' } })).rejects.toThrow(
        /gpuDevices=1,2: GPU 2 is not on this machine; nvidia-smi lists 0, 1/,
      );
      await expect(cuda.servers.start({ modelRef: 'demo:q8_0', profile: { ...profile, gpuDevices: '0,0' } })).rejects.toThrow(
        /gpuDevices: gpuDevices lists a GPU twice/,
      );
      expect(cuda.servers.list().filter((server) => server.state !== 'stopped')).toHaveLength(1);
    } finally {
      await cuda.dispose();
    }
    // Constructed listings: GPU 1's UUID is also the second Vulkan device's, behind an integrated GPU.
    const listings = async (withVulkan: boolean) => ({
      nvidia: parseNvidiaSmiGpus(
        'GPU 0: NVIDIA H200 (UUID: GPU-aaaa0000-0000-0000-0000-000000000000)\nGPU 1: NVIDIA H200 (UUID: GPU-bbbb1111-0000-0000-0000-000000000000)\n',
      ),
      vulkan: withVulkan
        ? [
            {
              index: 0,
              name: 'Intel(R) Graphics',
              type: 'PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU',
              uuid: '868088a7-0400-0000-0002-000000000000',
            },
            { index: 1, name: 'NVIDIA H200', type: 'PHYSICAL_DEVICE_TYPE_DISCRETE_GPU', uuid: 'aaaa0000-0000-0000-0000-000000000000' },
            { index: 2, name: 'NVIDIA H200', type: 'PHYSICAL_DEVICE_TYPE_DISCRETE_GPU', uuid: 'bbbb1111-0000-0000-0000-000000000000' },
          ]
        : null,
    });
    const vulkan = await serverHarness(tempDir(), { readGpuUsed: twoGpus, readGpuIdentities: listings }, async () => ({
      ...(await requireEngine()),
      backend: 'vulkan',
    }));
    try {
      const ready = await vulkan.servers.start({ modelRef: 'demo:q8_0', profile: { ...profile, gpuDevices: '1' } });
      const environ = fs.readFileSync(`/proc/${ready.pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain('GGML_VK_VISIBLE_DEVICES=2');
      expect(environ.filter((entry) => entry.startsWith('CUDA_VISIBLE_DEVICES='))).toEqual([]);
    } finally {
      await vulkan.dispose();
    }
    // Started from a shell that set CUDA_VISIBLE_DEVICES (here by UUID prefix), a profile that
    // leaves the GPUs to the environment follows it.
    const inherited = await serverHarness(
      tempDir(),
      { readGpuUsed: twoGpus, readGpuIdentities: listings, environment: { CUDA_VISIBLE_DEVICES: 'GPU-bbbb1111' } },
      async () => ({ ...(await requireEngine()), backend: 'cuda' }),
    );
    try {
      const ready = await inherited.servers.start({ modelRef: 'demo:q8_0', profile });
      expect(ready.state).toBe('ready');
      expect(inherited.servers.get(ready.id).profile.gpuDevices).toBe('1');
      expect(ready.gpuUsedBeforeSpawnMib).toBe(1212);
      const environ = fs.readFileSync(`/proc/${ready.pid}/environ`, 'utf8').split('\0');
      expect(environ).toEqual(expect.arrayContaining(['CUDA_VISIBLE_DEVICES=1', 'CUDA_DEVICE_ORDER=PCI_BUS_ID']));
    } finally {
      await inherited.dispose();
    }
    const cpu = await serverHarness(tempDir(), { readGpuUsed: twoGpus }, async () => ({ ...(await requireEngine()), backend: 'cpu' }));
    try {
      await expect(cpu.servers.start({ modelRef: 'demo:q8_0', profile: { ...profile, gpuDevices: '0' } })).rejects.toThrow(
        /gpuDevices=0: this engine is a CPU build and runs on no GPU/,
      );
    } finally {
      await cpu.dispose();
    }
  });

  it('keeps serving requests after start and stops every server on dispose', async () => {
    const harness = await serverHarness(tempDir());
    const a = await harness.servers.start({ modelRef: 'demo:q8_0', profile });
    const b = await harness.servers.start({ modelRef: 'demo:q4_k_m', profile });
    const agent = createKeepAliveAgent(2);
    const reply = await streamCompletion({
      baseUrl: b.baseUrl!,
      headers: { ...harness.servers.get(b.id).authHeaders },
      agent,
      body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 },
    });
    agent.destroy();
    expect(reply.error).toBeNull();
    await harness.dispose();
    expect(isAlive(identify(a.pid!))).toBe(false);
    expect(isAlive(identify(b.pid!))).toBe(false);
  });
});
