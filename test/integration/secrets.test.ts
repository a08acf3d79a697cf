import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runToCompletion } from '../../src/main/core/process';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { createKeepAliveAgent, streamCompletion } from '../../src/main/client/stream-client';
import { serverHarness } from '../support/servers';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

function filesContaining(dir: string, needle: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => fs.readFileSync(file).includes(Buffer.from(needle)));
}

async function status(url: string, init: RequestInit = {}): Promise<number> {
  const response = await fetch(url, init);
  await response.arrayBuffer();
  return response.status;
}

describe('a real llama-server and its credentials', () => {
  it('gets its own API key through its environment: others are refused, Infer Lab is served, and the key is stored nowhere', async () => {
    const dir = tempDir();
    const harness = await serverHarness(dir);
    try {
      // Other servers on a shared test machine must not block this one: it measures nothing.
      const server = await harness.servers.prepare({
        modelRef: 'demo:q8_0',
        profile: { ...defaultProfile('keyed'), contextSize: 1024, threads: 1 },
        force: true,
      });
      const ready = await server.start();
      expect(ready.state).toBe('ready');
      const authorization = server.authHeaders.authorization!;
      const key = authorization.replace(/^Bearer /, '');
      expect(key).toMatch(/^[\w-]{32}$/);

      // Not in argv, which every local user can read; in the environment, which only the owner can.
      const cmdline = fs.readFileSync(`/proc/${ready.pid}/cmdline`, 'utf8');
      expect(cmdline).not.toContain(key);
      expect(fs.readFileSync(`/proc/${ready.pid}/environ`, 'utf8').split('\0')).toContain(`LLAMA_API_KEY=${key}`);

      // Another local user without the key can neither generate nor erase the slots.
      const chat = {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 }),
      };
      expect(await status(`${ready.baseUrl}/v1/chat/completions`, chat)).toBe(401);
      expect(await status(`${ready.baseUrl}/slots/0?action=erase`, { method: 'POST' })).toBe(401);
      expect(await status(`${ready.baseUrl}/metrics`)).toBe(401);
      expect(await status(`${ready.baseUrl}/health`)).toBe(200);
      expect(await status(`${ready.baseUrl}/metrics`, { headers: { authorization } })).toBe(200);
      const agent = createKeepAliveAgent(1);
      const reply = await streamCompletion({
        baseUrl: ready.baseUrl!,
        headers: { authorization },
        agent,
        body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
      });
      agent.destroy();
      expect(reply.error).toBeNull();
      // The effective configuration (read from /props, which needs the key) was filled in.
      expect(ready.effectiveConfig!.slots).toBe(1);
      expect(JSON.stringify(ready)).not.toContain(key);
      await server.stop();
      expect(filesContaining(dir, key)).toEqual([]);
    } finally {
      await harness.dispose();
    }
  });

  it('refuses secret-bearing and model-changing extra flags before anything is launched', async () => {
    const harness = await serverHarness(tempDir());
    try {
      for (const extraFlags of [
        ['--hf-token', 'hf_SECRET'],
        ['--api-key', 'k'],
        ['--log-file', path.join(tempDir(), 'victim')],
        ['-mu', 'https://example.com/x.gguf'],
      ]) {
        await expect(
          harness.servers.prepare({ modelRef: 'demo:q8_0', profile: { ...defaultProfile('flagged'), extraFlags } }),
          extraFlags[0],
        ).rejects.toThrow(new RegExp(`extraFlags: ${extraFlags[0]} is not allowed`));
      }
      expect(harness.servers.list()).toEqual([]);
    } finally {
      await harness.dispose();
    }
  });

  it("starts its children without the user's credentials or llama-server settings from the environment", async () => {
    // Planted where a user's shell would have them: our own key, other services' keys, a
    // Hugging Face token, and a LLAMA_ARG_* that would quietly change the measured server.
    const planted: Record<string, string> = {
      INFERLAB_API_KEY: 'sk-inferlab-PLANTED',
      INFERLAB_WINDOW_TOKEN: 'window-PLANTED-0123456789abcdef0123456789',
      OPENAI_API_KEY: 'sk-openai-PLANTED',
      HF_TOKEN: 'hf_PLANTED',
      AWS_SECRET_ACCESS_KEY: 'aws-PLANTED',
      LLAMA_ARG_CTX_SIZE: '256',
    };
    const saved = Object.fromEntries(Object.keys(planted).map((name) => [name, process.env[name]]));
    Object.assign(process.env, planted);
    const harness = await serverHarness(tempDir());
    try {
      const server = await harness.servers.prepare({
        modelRef: 'demo:q8_0',
        profile: { ...defaultProfile('clean-env'), contextSize: 1024, threads: 1 },
        force: true,
      });
      const ready = await server.start();
      const environ = fs.readFileSync(`/proc/${ready.pid}/environ`, 'utf8').split('\0');
      const leaked = environ.filter((entry) => Object.values(planted).some((value) => entry.endsWith(`=${value}`)));
      expect(leaked).toEqual([]);
      // What it needs still reaches it: its own key, and the user's PATH.
      expect(environ.some((entry) => entry.startsWith('LLAMA_API_KEY='))).toBe(true);
      expect(environ).toContain(`PATH=${process.env.PATH}`);
      // The profile's context, not the environment's.
      expect(ready.effectiveConfig!.contextSize).toBe(1024);
      await server.stop();

      // Every other child (nvidia-smi, llama-quantize, the build's cmake) starts the same way.
      const env = await runToCompletion('env', []);
      expect(env.output.split('\n').filter((line) => Object.values(planted).some((value) => line.endsWith(`=${value}`)))).toEqual([]);
    } finally {
      await harness.dispose();
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});
