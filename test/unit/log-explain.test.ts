import { describe, expect, it } from 'vitest';
import { EXPLAIN_LINE_CHARS, EXPLAIN_MAX_CHARS, explainLlamaLog } from '../../src/main/engines/llamacpp/log-explain';
import { capturedFiles, readCaptured } from '../support/captured';

const explain = (file: string) => explainLlamaLog(readCaptured(`llama-logs/${file}`));

describe('server explain on captured llama.cpp logs', () => {
  it.each(capturedFiles('llama-logs'))('%s: names a backend, a layer count, a failure or the ready address, never nothing', (file) => {
    const explanation = explainLlamaLog(readCaptured(file));
    expect(explanation.llamaLines).toBeGreaterThan(0);
    const named = [explanation.backend, explanation.layers, explanation.fault, explanation.listeningOn].filter((fact) => fact !== null);
    expect(named.length).toBeGreaterThan(0);
    // Every warning says what to do.
    for (const warning of explanation.warnings) expect(warning).toMatch(/^[A-Z ]+: .+\. .+/);
  });

  it('two CUDA GPUs, 78 of 81 layers, yet more than half the weight bytes in host memory: partial, with the warning', () => {
    const explanation = explain('cuda-2024-partial-offload-78of81-rtx4060ti-rtx3060.log');
    expect(explanation.devices.map((device) => `${device.id} ${device.name}`)).toEqual([
      'CUDA0 NVIDIA GeForce RTX 4060 Ti',
      'CUDA1 NVIDIA GeForce RTX 3060',
    ]);
    expect(explanation.offload).toMatchObject({ state: 'partial', layers: { offloaded: 78, total: 81 } });
    expect(explanation.kvMib).toEqual({ CUDA_Host: 64, CUDA0: 1472, CUDA1: 1024 });
    expect(explanation.kvTypes).toEqual({ k: 'f16', v: 'f16' });
    expect(explanation.flashAttention).toBe('off');
    expect(explanation.warnings).toEqual([expect.stringMatching(/^MOST WEIGHTS ARE IN HOST MEMORY: 22994 of 44280 MiB \(52 %\)/)]);
  });

  it('an H800 found but 0 of 33 layers offloaded: everything on the CPU, said as a warning', () => {
    const explanation = explain('cuda-2024-offloaded-0of33-h800.log');
    expect(explanation).toMatchObject({ backend: 'cuda', offload: { state: 'none' } });
    expect(explanation.devices).toEqual([{ id: 'CUDA0', name: 'NVIDIA H800', integrated: null, used: false }]);
    expect(explanation.warnings).toEqual([expect.stringMatching(/^NO LAYERS ON THE GPU: 1 GPU device\(s\) found, 0\/33 layers offloaded/)]);
  });

  it('a device-named Vulkan buffer counts as that device; MoltenVK on two GPUs says which one was used', () => {
    const rx570 = explain('vulkan-2024-device-named-buffer-rx570-33of33.log');
    expect(rx570.devices).toEqual([
      { id: 'Vulkan0', name: 'Radeon RX 570 Series (AMD proprietary driver)', integrated: false, used: true },
    ]);
    expect(rx570.offload?.state).toBe('full');
    const moltenvk = explain('vulkan-moltenvk-2-devices-rx6800xt-pro5500m.log');
    expect(moltenvk.build).toMatch(/^5031 \(be0a0f8c\) with Apple clang/);
    expect(moltenvk.devices.map((device) => [device.id, device.used])).toEqual([
      ['Vulkan0', true],
      ['Vulkan1', false],
    ]);
  });

  it('an integrated Radeon (uma: 1) is marked integrated; a failed allocation is the failure, with its fix', () => {
    const explanation = explain('vulkan-radeon-890m-radv-alloc-failure.log');
    expect(explanation.devices[0]).toMatchObject({ id: 'Vulkan0', integrated: true });
    expect(explanation.fault?.code).toBe('out_of_memory');
  });

  it('journald prefixes, the per-sequence context below the trained length, a q4_0 K cache with flash attention off', () => {
    const deepseek = explain('cuda-2025-llama_init_from_model-8gpu-n_ctx_per_seq-warning.log');
    expect(deepseek.context).toEqual({ size: 16384, perSequence: 2048, trained: 163840 });
    expect(deepseek.kvTypes).toEqual({ k: 'q4_0', v: 'f16' });
    // A quantized K cache works without flash attention; only a quantized V cache needs it.
    expect(deepseek.warnings).toEqual([]);
    const journald = explain('cuda-journald-prefixed-koboldcpp-44of49-2gpu.log');
    expect(journald.offload).toMatchObject({ state: 'partial', layers: { offloaded: 44, total: 49 } });
  });
});

describe('server explain on constructed lines in current and other formats', () => {
  it('warns about an integrated GPU used beside a discrete one, with the device to choose', () => {
    const explanation = explainLlamaLog(
      [
        'ggml_vulkan: 0 = Intel(R) HD Graphics 530 (SKL GT2) (Intel Corporation) | uma: 1 | fp16: 1 | warp size: 32',
        'ggml_vulkan: 1 = AMD Radeon (TM) R9 380 Series (AMD proprietary driver) | uma: 0 | fp16: 0 | warp size: 64',
        'llama_model_load_from_file_impl: using device Vulkan0 (Intel(R) HD Graphics 530 (SKL GT2)) - 8000 MiB free',
        'load_tensors: offloaded 33/33 layers to GPU',
        'load_tensors:      Vulkan0 model buffer size =  4155.99 MiB',
        'load_tensors:   CPU_Mapped model buffer size =   281.81 MiB',
      ].join('\n'),
    );
    expect(explanation.warnings).toEqual([
      expect.stringMatching(
        /^AN INTEGRATED GPU WAS USED: Vulkan0 Intel\(R\) HD Graphics 530 .*\(--device Vulkan1, or GGML_VK_VISIBLE_DEVICES\)/,
      ),
    ]);
  });

  it('reads the current format: KV types from the cache size line, flash attention resolved from auto, slots; warns on a quantized V cache without it and a context past the trained length', () => {
    const explanation = explainLlamaLog(
      [
        'build: 7063 (80fb11ac) with cc (Debian 12.2.0-14) 12.2.0 for x86_64-linux-gnu',
        'print_info: n_ctx_train      = 4096',
        'llama_context: n_ctx         = 16384',
        'llama_context: n_ctx_per_seq = 8192',
        'llama_context: flash_attn    = auto',
        'llama_context: Flash Attention was auto, set to disabled',
        'llama_kv_cache:        CPU KV buffer size =   512.00 MiB',
        'llama_kv_cache: size =  512.00 MiB ( 16384 cells,  32 layers,  2/2 seqs), K (f16):  256.00 MiB, V (q8_0):  256.00 MiB',
        'srv          init: initializing slots, n_slots = 2',
      ].join('\n'),
    );
    expect(explanation).toMatchObject({
      build: '7063 (80fb11ac) with cc (Debian 12.2.0-14) 12.2.0 for x86_64-linux-gnu',
      kvTypes: { k: 'f16', v: 'q8_0' },
      flashAttention: 'off',
      slots: 2,
      context: { size: 16384, perSequence: 8192, trained: 4096 },
    });
    expect(explanation.warnings).toEqual([
      expect.stringMatching(/^A QUANTIZED V CACHE WITHOUT FLASH ATTENTION: type_v q8_0/),
      expect.stringMatching(/^CONTEXT BEYOND THE TRAINED LENGTH: 8192 tokens per sequence, the model was trained on 4096/),
    ]);
  });
});

describe('server explain on hostile text', () => {
  it('reads only the first 512 characters of a line and the first 4 MiB of a log', () => {
    expect(explainLlamaLog(`${' '.repeat(100)}srv init: initializing slots, n_slots = 4`).slots).toBe(4);
    expect(explainLlamaLog(`${' '.repeat(EXPLAIN_LINE_CHARS)}srv init: initializing slots, n_slots = 4`).slots).toBeNull();
    const late = `${'print_info: n_vocab = 32000\n'.repeat(Math.ceil(EXPLAIN_MAX_CHARS / 28))}srv init: n_slots = 4`;
    expect(explainLlamaLog(late).slots).toBeNull();
  });

  // Each of these made some pattern scan the rest of the line from every place it could start:
  // before the limits one 200 kB line took up to 1.7 s, 16 MiB of them hours.
  it.each(['Vulkan0: x ', 'K (f16): ', 'ggml_backend_x_buffer_type_alloc_buffer: allocating ', `: ${' '.repeat(40)}`])(
    '16 MiB of %j, as one line and as 1000-character lines, is explained within the test timeout',
    (unit) => {
      for (const newline of ['', '\n']) {
        const text = (unit.repeat(Math.ceil(1000 / unit.length)) + newline).repeat(Math.ceil((16 * 2 ** 20) / 1000));
        expect(explainLlamaLog(text).warnings).toEqual([]);
      }
    },
  );
});
