import type { LogExplanation } from '../../../shared/contract/server';
import { offloadByPlacement } from '../../../shared/gpu-offload';
import { weightPlacement } from '../../../shared/weight-placement';
import { classifyFault, parseLogFacts } from './log-facts';

// "build: 5908 (538cc77f) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu"; current builds
// print "common_params_print_info: build 1 (80fb11a) with GNU 12.2.0 for Linux x86_64".
const BUILD = /\bbuild[:=]?\s*(\d+ \([0-9a-f]+\))(?: with (.+))?/;
// "ggml_cuda_init: found 2 CUDA devices:" (ROCm builds say "ROCm devices") and then "  Device 0: NVIDIA H800, compute capability 9.0, VMM: yes".
const CUDA_FAMILY = /found \d+ (CUDA|ROCm) devices/;
const CUDA_DEVICE = /^\s*(?:\S.*?:\s+)?Device (\d+): ([^,]+),/;
// "ggml_vulkan: 0 = AMD Radeon Graphics (RADV GFX1150) (radv) | uma: 1 | ..." and the 2024 "Vulkan0: Radeon RX 570 Series (AMD proprietary driver) | uma: 0 | ...".
const VULKAN_DEVICE = /(?:ggml_vulkan: (\d+) =|\bVulkan(\d+):) (.+?) \| uma: ([01])/;
// "ggml_metal_init: found device: Apple M2 Max", newer "ggml_metal_device_init: GPU name:   Apple M4".
const METAL_DEVICE = /ggml_metal\w*: (?:found device:|GPU name:)\s+(.+?)\s*$/;
// "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA H200) - 140000 MiB free".
const USING_DEVICE = /using device (\w+) \(/;
const KV_TYPES_OLD = /type_k\s*=\s*'(\w+)',\s*type_v\s*=\s*'(\w+)'/;
const KV_TYPES_NEW = /\bK \((\w+)\):.*\bV \((\w+)\):/;
const FLASH_ATTENTION = /flash_attn\s*=\s*(\w+)/;
const FLASH_ATTENTION_RESOLVED = /Flash Attention was \w+, set to (enabled|disabled)/;
// "n_ctx_per_seq = 2048", in current builds "n_ctx_seq = 2048".
const CONTEXT_PER_SEQUENCE = /\bn_ctx_(?:per_)?seq\s*=\s*(\d+)/;
const SLOTS = /\bn_slots\s*=\s*(\d+)/;
const V_TYPES_WITHOUT_FLASH = /^(f16|bf16|f32)$/;

/**
 * A pasted log is untrusted text, and several patterns here (and the fault rules) cost time in
 * proportion to a line's length for each place they could start. llama.cpp's lines are under
 * 400 characters and its startup facts come first, so only the start of each line, and of the
 * log, is read: the cost stays linear in the input whatever it holds.
 */
export const EXPLAIN_MAX_CHARS = 4 * 2 ** 20;
export const EXPLAIN_LINE_CHARS = 512;

const BACKEND_OF_DEVICE: readonly [RegExp, string][] = [
  [/^CUDA\d/, 'cuda'],
  [/^ROCm\d/, 'rocm'],
  [/^Vulkan\d/, 'vulkan'],
  [/^Metal/, 'metal'],
  [/^SYCL\d/, 'sycl'],
];

function flashAttentionState(value: string): LogExplanation['flashAttention'] {
  if (/^(1|on|enabled|true)$/i.test(value)) return 'on';
  if (/^(0|off|disabled|false)$/i.test(value)) return 'off';
  return /^auto$/i.test(value) ? 'auto' : null;
}

/** What the log's lines say one by one: the build, the devices found and used, the KV types, flash attention, context and slots. */
function scanLines(lines: readonly string[]) {
  const devices: LogExplanation['devices'] = [];
  const used = new Set<string>();
  let build: string | null = null;
  let cudaFamily = 'CUDA';
  let kvTypes: LogExplanation['kvTypes'] = null;
  let flashAttention: LogExplanation['flashAttention'] = null;
  let perSequence: number | null = null;
  let slots: number | null = null;
  const addDevice = (id: string, name: string, integrated: boolean | null) => {
    if (!devices.some((device) => device.id === id)) devices.push({ id, name, integrated, used: null });
  };
  for (const line of lines) {
    const built = BUILD.exec(line);
    if (built && !build) build = built[2] ? `${built[1]} with ${built[2]}` : built[1]!;
    const family = CUDA_FAMILY.exec(line);
    if (family) cudaFamily = family[1]!;
    const cuda = CUDA_DEVICE.exec(line);
    if (cuda) addDevice(`${cudaFamily}${cuda[1]}`, cuda[2]!.trim(), null);
    const vulkan = VULKAN_DEVICE.exec(line);
    if (vulkan) addDevice(`Vulkan${vulkan[1] ?? vulkan[2]}`, vulkan[3]!.trim(), vulkan[4] === '1');
    const metal = METAL_DEVICE.exec(line);
    if (metal) addDevice('Metal', metal[1]!, true);
    const using = USING_DEVICE.exec(line);
    if (using) used.add(using[1]!);
    const kv = KV_TYPES_OLD.exec(line) ?? KV_TYPES_NEW.exec(line);
    if (kv) kvTypes = { k: kv[1]!, v: kv[2]! };
    const resolved = FLASH_ATTENTION_RESOLVED.exec(line);
    if (resolved) flashAttention = resolved[1] === 'enabled' ? 'on' : 'off';
    else {
      const flash = FLASH_ATTENTION.exec(line);
      if (flash) flashAttention = flashAttentionState(flash[1]!) ?? flashAttention;
    }
    const sequence = CONTEXT_PER_SEQUENCE.exec(line);
    if (sequence) perSequence = Number(sequence[1]);
    const slotCount = SLOTS.exec(line);
    if (slotCount) slots = Number(slotCount[1]);
  }
  return { build, devices, used, kvTypes, flashAttention, perSequence, slots };
}

/** Marks each device used or not, and names the backend the weights went to. */
function placeDevices(
  devices: LogExplanation['devices'],
  used: ReadonlySet<string>,
  modelDevices: readonly string[],
): LogExplanation['backend'] {
  // A device is used when the log says so, or when it holds weights; a log that names neither leaves it unknown.
  for (const device of devices) {
    // 2024 Vulkan builds name a buffer after the device ("Radeon RX 570 Series"), without the driver the device line adds.
    const holdsWeights = modelDevices.some((name) => name === device.id || name === device.name || device.name.startsWith(`${name} (`));
    device.used = used.has(device.id) || holdsWeights ? true : used.size > 0 || modelDevices.length > 0 ? false : null;
  }
  return (
    BACKEND_OF_DEVICE.find(([pattern]) => modelDevices.some((device) => pattern.test(device)))?.[1] ??
    (devices.some((device) => device.id.startsWith('Vulkan')) ? 'vulkan' : null) ??
    (devices[0]?.id.startsWith('ROCm') ? 'rocm' : devices.length > 0 ? 'cuda' : modelDevices.length > 0 ? 'cpu' : null)
  );
}

function logOffload(backend: LogExplanation['backend'], facts: ReturnType<typeof parseLogFacts>): LogExplanation['offload'] {
  const weights = weightPlacement(facts.buffersMib, facts.inputEmbedding);
  if (backend === null) return null;
  if (backend === 'cpu')
    return { state: 'none', backend: 'cpu', layers: facts.layersOffloaded, weights, reason: 'no GPU device held weights', warning: null };
  return offloadByPlacement(
    backend === 'cuda' || backend === 'vulkan' || backend === 'metal' ? backend : null,
    facts.layersOffloaded,
    weights,
  );
}

/** What a user should act on: weights in host memory, no layers on the GPU, an integrated GPU, a V cache that needs flash attention, context past training. */
function logWarnings(
  explained: Pick<LogExplanation, 'devices' | 'offload' | 'kvTypes' | 'flashAttention'>,
  facts: ReturnType<typeof parseLogFacts>,
  sequenceContext: number | null,
): string[] {
  const { devices, offload, kvTypes, flashAttention } = explained;
  const warnings: string[] = [];
  if (offload?.warning) warnings.push(offload.warning);
  if (devices.length > 0 && facts.layersOffloaded?.offloaded === 0)
    warnings.push(
      `NO LAYERS ON THE GPU: ${devices.length} GPU device(s) found, 0/${facts.layersOffloaded.total} layers offloaded; everything runs on the CPU. Set gpuLayers (-ngl) above 0.`,
    );
  const integratedUsed = devices.filter((device) => device.integrated === true && device.used === true);
  const discrete = devices.filter((device) => device.integrated === false);
  if (integratedUsed.length > 0 && discrete.length > 0)
    warnings.push(
      `AN INTEGRATED GPU WAS USED: ${integratedUsed.map((device) => `${device.id} ${device.name}`).join(', ')}, although ${discrete.map((device) => `${device.id} ${device.name}`).join(', ')} is discrete. Choose the discrete one (--device ${discrete[0]!.id}, or GGML_VK_VISIBLE_DEVICES).`,
    );
  if (kvTypes && !V_TYPES_WITHOUT_FLASH.test(kvTypes.v) && flashAttention === 'off')
    warnings.push(
      `A QUANTIZED V CACHE WITHOUT FLASH ATTENTION: type_v ${kvTypes.v} needs flash attention, which is off; llama.cpp refuses it or falls back. Turn flash attention on (-fa on) or use -ctv f16.`,
    );
  const trained = facts.trainedContext;
  if (trained !== null && sequenceContext !== null && sequenceContext > trained)
    warnings.push(
      `CONTEXT BEYOND THE TRAINED LENGTH: ${sequenceContext} tokens per sequence, the model was trained on ${trained}; past ${trained} tokens its output is not what it was trained for. Lower contextSize (-c) to ${trained} × slots or less.`,
    );
  return warnings;
}

/**
 * Reads a llama-server or llama.cpp log from any build (2024 and current formats, journald or
 * other prefixes) into the facts that decide performance, and the warnings a user should act on.
 */
export function explainLlamaLog(text: string): LogExplanation {
  const lines = text
    .slice(0, EXPLAIN_MAX_CHARS)
    .split(/\r?\n/)
    .map((line) => (line.length > EXPLAIN_LINE_CHARS ? line.slice(0, EXPLAIN_LINE_CHARS) : line));
  const facts = parseLogFacts(lines);
  const { build, devices, used, kvTypes, flashAttention, perSequence, slots } = scanLines(lines);
  const modelDevices = Object.keys(facts.buffersMib)
    .filter((key) => key.endsWith(' model'))
    .map((key) => key.slice(0, -' model'.length));
  const backend = placeDevices(devices, used, modelDevices);
  const offload = logOffload(backend, facts);
  const warnings = logWarnings({ devices, offload, kvTypes, flashAttention }, facts, perSequence ?? facts.contextSize);
  const kvMib = Object.fromEntries(
    Object.entries(facts.buffersMib)
      .filter(([key]) => key.endsWith(' KV'))
      .map(([key, mib]) => [key.slice(0, -' KV'.length), mib]),
  );
  return {
    build,
    backend,
    devices,
    layers: facts.layersOffloaded,
    offload,
    kvMib,
    kvTypes,
    context: { size: facts.contextSize, perSequence, trained: facts.trainedContext },
    flashAttention,
    slots,
    fault: classifyFault(lines),
    warnings,
    lines: lines.length,
  };
}
