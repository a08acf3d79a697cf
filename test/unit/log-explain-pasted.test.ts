import { describe, expect, it } from 'vitest';
import { explainLlamaLog } from '../../src/main/engines/llamacpp/log-explain';
import { explainRefusal, logExplanationText } from '../../src/main/cli/log-explanation-text';
import { readCaptured } from '../support/captured';

// Users paste whatever part of a log they have: a bug report's tail, the head of a hang, two lines.
// Every text here is a captured file (test/fixtures/captured/README.md) or a part of one cut at a line.
const explain = (file: string) => explainLlamaLog(readCaptured(`llama-logs/${file}`));
const fromLine = (file: string, start: string) => {
  const text = readCaptured(`llama-logs/${file}`);
  return text.slice(text.indexOf(start));
};

describe('server explain on whatever part of a real llama.cpp log was pasted', () => {
  it('a 2024 log whose ready line has no scheme, pasted from its KV cache line on: Metal, its buffers, one slot, the address', () => {
    const tail = fromLine('server-2024-10-metal-m3max-listening-no-scheme-b3892.log', 'llama_kv_cache_init:');
    const explanation = explainLlamaLog(tail);
    expect(explainRefusal(explanation, 'tail.log')).toBeNull();
    expect(explanation).toMatchObject({
      backend: 'metal',
      kvMib: { Metal: 40 },
      kvTypes: { k: 'f16', v: 'f16' },
      slots: 1,
      context: { size: null, perSequence: 2048, trained: null },
      listeningOn: '127.0.0.1:8080',
      build: null,
      layers: null,
    });
    expect(explanation.missing).toEqual([
      'no build line in this text: the engine build is unknown',
      'no device line: which GPUs llama.cpp found is unknown',
      'no offloaded-layers line: how many layers went to the GPU is unknown',
      'no model buffer line: where the weights went is unknown',
      'no context line: the total context size is unknown',
      'no flash attention line: whether flash attention was on is unknown',
    ]);
  });

  it('the whole 2024 log with that ready line: build, Metal device used, 41/41 layers, the address without a scheme', () => {
    const explanation = explain('server-2024-10-metal-m3max-listening-no-scheme-b3892.log');
    expect(explanation).toMatchObject({
      build: '3892 (96b69121) with Apple clang version 15.0.0 (clang-1500.3.9.4) for arm64-apple-darwin23.4.0',
      backend: 'metal',
      devices: [{ id: 'Metal', name: 'Apple M3 Max', integrated: true, used: true }],
      layers: { offloaded: 41, total: 41 },
      offload: { state: 'full' },
      flashAttention: 'off',
      context: { size: 2048, perSequence: 2048, trained: 8192 },
      listeningOn: '127.0.0.1:8080',
      missing: [],
    });
  });

  it('a multi-GPU CUDA tail (-sm row over four GPUs) from its KV lines on: cuda, the KV per device, one slot; the rest named as missing', () => {
    const explanation = explain('server-2025-05-tail-4gpu-cuda-kv-compute-slots-sm-row.log');
    expect(explainRefusal(explanation, 'tail.log')).toBeNull();
    expect(explanation).toMatchObject({
      backend: 'cuda',
      devices: [],
      kvMib: { CUDA2: 703.5, CUDA3: 644.88 },
      kvTypes: { k: 'f16', v: 'f16' },
      slots: 1,
      context: { size: null, perSequence: 30016, trained: null },
      offload: { state: 'unknown', backend: 'cuda' },
      listeningOn: null,
    });
    expect(explanation.missing).toEqual([
      'no build line in this text: the engine build is unknown',
      'no device line: which GPUs llama.cpp found is unknown',
      'no offloaded-layers line: how many layers went to the GPU is unknown',
      'no model buffer line: where the weights went is unknown',
      'no context line: the total context size is unknown',
      'no flash attention line: whether flash attention was on is unknown',
      'no listening line: whether the server became ready is unknown',
    ]);
  });

  it('the 2026 default log (verbosity 3): the device from device_info, 4 slots, the per-sequence context from the n_ctx_seq warning, the address', () => {
    const explanation = explain('server-2026-docker-rtx5090-device-info-no-buffers-mtp.log');
    expect(explainRefusal(explanation, 'x.log')).toBeNull();
    expect(explanation).toMatchObject({
      build: null,
      backend: 'cuda',
      devices: [{ id: 'CUDA0', name: 'NVIDIA GeForce RTX 5090', integrated: null, used: null }],
      layers: null,
      kvMib: {},
      slots: 4,
      context: { size: null, perSequence: 131072, trained: 262144 },
      listeningOn: '0.0.0.0:8000',
      warnings: [],
    });
    expect(explanation.missing).toContain('no build line in this text: the engine build is unknown');
    expect(explanation.missing).toContain('no KV cache line: the KV cache size and types are unknown');
  });

  it('the head of a 2026 start on eight H200s that hangs while fitting: eight CUDA devices, no ready line', () => {
    const explanation = explain('server-2026-docker-8xh200-device-info-head-only.log');
    expect(explainRefusal(explanation, 'x.log')).toBeNull();
    expect(explanation.backend).toBe('cuda');
    expect(explanation.devices.map((device) => `${device.id} ${device.name}`)).toEqual(
      [0, 1, 2, 3, 4, 5, 6, 7].map((index) => `CUDA${index} NVIDIA H200`),
    );
    expect(explanation).toMatchObject({ layers: null, slots: null, listeningOn: null, fault: null });
    expect(explanation.missing).toContain('no listening line: whether the server became ready is unknown');
  });

  it('the tail of a 2026 start under ollama: cuda from the compute buffer, one slot of 65536, the srv llama_server ready line', () => {
    const explanation = explain('server-2026-tail-ollama-sched-reserve-llama_server-listening.log');
    expect(explainRefusal(explanation, 'x.log')).toBeNull();
    expect(explanation).toMatchObject({
      backend: 'cuda',
      devices: [],
      slots: 1,
      context: { size: null, perSequence: 65536, trained: null },
      listeningOn: '127.0.0.1:42577',
    });
  });

  it('two lines, the ready line and "all slots are idle": the address, and everything else named as missing', () => {
    const explanation = explain('server-2025-02-tail-two-lines-listening-0.0.0.0.log');
    expect(explainRefusal(explanation, 'x.log')).toBeNull();
    expect(explanation).toMatchObject({ backend: null, devices: [], layers: null, slots: null, listeningOn: '0.0.0.0:8080' });
    expect(explanation.missing).toEqual([
      'no build line in this text: the engine build is unknown',
      'no device line: which GPUs llama.cpp found is unknown',
      'no offloaded-layers line: how many layers went to the GPU is unknown',
      'no model buffer line: where the weights went is unknown',
      'no KV cache line: the KV cache size and types are unknown',
      'no context line: the total context size is unknown',
      'no flash attention line: whether flash attention was on is unknown',
      'no slots line: how many requests it serves at once is unknown',
    ]);
  });

  it('the 2023 server: a tail with "llama server listening at" and the JSON ready entry; a whole log with the JSON build info', () => {
    const tail = explain('server-2023-tail-vram-scratch-listening-at-yi34b.log');
    expect(explainRefusal(tail, 'x.log')).toBeNull();
    expect(tail).toMatchObject({ slots: 1, context: { perSequence: 2048 }, listeningOn: '0.0.0.0:8080', backend: null });
    const whole = explain('server-2024-01-json-build-info-rtx4070laptop-0of33.log');
    expect(whole).toMatchObject({
      build: '1794 (1fc2f26)',
      backend: 'cuda',
      devices: [{ id: 'CUDA0', name: 'NVIDIA GeForce RTX 4070 Laptop GPU' }],
      layers: { offloaded: 0, total: 33 },
      kvTypes: { k: 'f16', v: 'f16' },
      slots: 1,
      context: { size: 2048, perSequence: 2048, trained: 4096 },
      listeningOn: '127.0.0.1:8080',
    });
    expect(whole.warnings).toEqual([expect.stringMatching(/^NO LAYERS ON THE GPU: 1 GPU device\(s\) found, 0\/33 layers offloaded/)]);
  });

  it('a 2024 tail with a CUDA0 KV buffer and an input buffer, no listening line: cuda, not cpu', () => {
    const explanation = explain('server-2024-01-tail-cuda0-kv-compute-slots-pr5104.log');
    expect(explainRefusal(explanation, 'x.log')).toBeNull();
    expect(explanation).toMatchObject({
      backend: 'cuda',
      kvMib: { CUDA0: 160 },
      slots: 1,
      context: { size: 512, perSequence: 512 },
      listeningOn: null,
    });
  });

  it('the mid-2024 "INFO [ main] HTTP server listening | ... port= hostname=" entry gives the address', () => {
    const explanation = explain('server-2024-07-tail-info-http-server-listening-pr8359.log');
    expect(explainRefusal(explanation, 'x.log')).toBeNull();
    expect(explanation.listeningOn).toBe('localhost:8080');
  });
});

describe('server explain for a terminal', () => {
  it('prints the ready address as a row and what the text leaves unknown under "missing:"', () => {
    const tail = explain('server-2025-05-tail-4gpu-cuda-kv-compute-slots-sm-row.log');
    const text = logExplanationText(tail, 'tail.log');
    expect(text).toMatch(/^tail\.log: 16 lines, 14 of them llama\.cpp's$/m);
    expect(text).toMatch(/^KV cache +CUDA2 704 MiB, CUDA3 645 MiB; K f16, V f16$/m);
    expect(text).toMatch(/^listening +— \(no ready line\)$/m);
    expect(text).toMatch(/^missing:\n {2}no build line in this text: the engine build is unknown\n/m);
    const whole = logExplanationText(explain('server-2025-jetson-orin-cpu-mapped-0of29-b5489.log'), 'orin.log');
    expect(whole).toMatch(/^listening +127\.0\.0\.1:8080$/m);
    expect(whole).toMatch(/^missing: none$/m);
  });
});

describe('server explain refuses only text with no llama.cpp line', () => {
  it('refuses a Python traceback, even one that says "No such file or directory", naming where it came from', () => {
    const traceback = [
      'Traceback (most recent call last):',
      '  File "/home/user/serve.py", line 12, in <module>',
      '    model = load("models/llama-2-7b.Q4_K_M.gguf")',
      '  File "/home/user/serve.py", line 5, in load',
      '    with open(path, "rb") as handle:',
      "FileNotFoundError: [Errno 2] No such file or directory: 'models/llama-2-7b.Q4_K_M.gguf'",
    ].join('\n');
    const explanation = explainLlamaLog(traceback);
    expect(explanation.llamaLines).toBe(0);
    expect(explainRefusal(explanation, 'crash.txt')).toMatch(/^crash\.txt: no llama\.cpp startup lines found \(/);
    expect(explainRefusal(explainLlamaLog(''), 'standard input')).toMatch(/^standard input: no llama\.cpp startup lines found/);
  });

  it('accepts every tail of a captured log, down to its last line, and reads the ready line and the KV buffers in it', () => {
    for (const file of ['server-2025-jetson-orin-cpu-mapped-0of29-b5489.log', 'cuda-2024-partial-offload-78of81-rtx4060ti-rtx3060.log']) {
      const lines = readCaptured(`llama-logs/${file}`).trimEnd().split('\n');
      for (let start = 0; start < lines.length; start += 1) {
        const tail = lines.slice(start).join('\n');
        const explanation = explainLlamaLog(tail);
        expect(explainRefusal(explanation, file), `${file} from line ${start}`).toBeNull();
        if (tail.includes('server is listening on')) expect(explanation.listeningOn, `${file} from line ${start}`).toBe('127.0.0.1:8080');
        if (tail.includes('CUDA1 KV buffer size')) expect(explanation.kvMib.CUDA1, `${file} from line ${start}`).toBe(1024);
      }
    }
  });
});
