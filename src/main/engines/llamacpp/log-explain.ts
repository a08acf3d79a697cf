import type { LogExplanation } from '../../../shared/contract/server';
import { offloadByPlacement } from '../../../shared/gpu-offload';
import { weightPlacement } from '../../../shared/weight-placement';
import { classifyFault, listeningAddress, parseLogFacts } from './log-facts';

// "build: 5908 (538cc77f) with cc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0 for x86_64-linux-gnu"; current builds
// print "common_params_print_info: build 1 (80fb11a) with GNU 12.2.0 for Linux x86_64".
const BUILD = /\bbuild[:=]?\s*(\d+ \([0-9a-f]+\))(?: with (.+))?/;
// The 2023 and early-2024 server's JSON entry {"message":"build info","build":1794,"commit":"1fc2f26"}, and the
// mid-2024 "INFO [ main] build info | ... build=3579 commit="fc4ca27b"": number and commit as separate fields.
const BUILD_ENTRY_NUMBER = /\bbuild"?[:=]\s*(\d+)/;
const BUILD_ENTRY_COMMIT = /\bcommit"?[:=]\s*"([0-9a-f]+)"/;
// A pattern that reads on to the end of the line (`.*`, a lazy `.+?` looking for a phrase, a `$` that sends the scan
// back) is tried from every place its start matches, so a line repeating the start costs its length squared. Those
// below read from one place: the line's first start (`^` with `m`, then a prefix that stops there), a start that
// begins a word (`\b`), or up to a `$` that any line terminator satisfies (`m`). The first start is where the
// pattern matched before too: it ends first, so what a later start finds after it, it finds as well.

// "ggml_cuda_init: found 2 CUDA devices:" (ROCm builds say "ROCm devices") and then "  Device 0: NVIDIA H800, compute capability 9.0, VMM: yes".
// A prefix (journald's, docker's) stops at the first device phrase with a name after it.
const CUDA_FAMILY = /found \d+ (CUDA|ROCm) devices/;
const CUDA_DEVICE = /^\s*(?:\S(?:(?!:\s+Device \d+: [^,]).)*?:\s+)?Device (\d+): ([^,]+),/;
// "ggml_vulkan: 0 = AMD Radeon Graphics (RADV GFX1150) (radv) | uma: 1 | ..." and the 2024 "Vulkan0: Radeon RX 570 Series (AMD proprietary driver) | uma: 0 | ...".
const VULKAN_DEVICE = /^(?:(?!(?:ggml_vulkan: \d+ =|\bVulkan\d+:) .).)*(?:ggml_vulkan: (\d+) =|\bVulkan(\d+):) (.+?) \| uma: ([01])/m;
// "ggml_metal_init: found device: Apple M2 Max", newer "ggml_metal_device_init: GPU name:   Apple M4".
const METAL_DEVICE = /\bggml_metal\w*: (?:found device:|GPU name:)\s+(\S(?:.*\S)?)\s*$/m;
// 2026 builds list the devices under "device_info:": "0.00.893.202 I   - CUDA0   : NVIDIA GeForce RTX 5090 (32606 MiB, 30930 MiB free)".
const LISTED_DEVICE = /(?:^|\s)- ((?:CUDA|ROCm|Vulkan|SYCL)\d+)\s+: (.*)$/m;
// "llama_model_load_from_file_impl: using device CUDA0 (NVIDIA H200) - 140000 MiB free".
const USING_DEVICE = /using device (\w+) \(/;
const KV_TYPES_OLD = /type_k\s*=\s*'(\w+)',\s*type_v\s*=\s*'(\w+)'/;
const KV_TYPES_NEW = /^(?:(?!\bK \(\w+\):).)*\bK \((\w+)\):.*\bV \((\w+)\):/m;
const FLASH_ATTENTION = /flash_attn\s*=\s*(\w+)/;
const FLASH_ATTENTION_RESOLVED = /Flash Attention was \w+, set to (enabled|disabled)/;
// "n_ctx_per_seq = 2048", in current builds "n_ctx_seq = 2048", and in the warning "n_ctx_seq (131072) < n_ctx_train (262144)".
const CONTEXT_PER_SEQUENCE = /\bn_ctx_(?:per_)?seq\s*(?:=\s*|\(\s*)(\d+)/;
const SLOTS = /\bn_slots\s*=\s*(\d+)/;
// Each slot's line: 2023 "-> Slot 0 - max context: 2048", 2024-2025 "slot init: id  0 | task -1 | new slot n_ctx_slot = 4096",
// 2026 "slot load_model: id  0 | task -1 | new slot, n_ctx = 131072". Tails often hold these but not the slot count.
const SLOT_2023 = /-> Slot (\d+) - max context: (\d+)/;
const NEW_SLOT = /\bid\s+(\d+) \| task -?\d+ \| new slot,? n_ctx(?:_slot)? = (\d+)/;
// Names and phrases only llama.cpp prints: its loaders', contexts' and backends' function prefixes, its buffer, layer,
// slot and ready lines. A text without one is not a llama.cpp log, whatever else it says.
const LLAMA_LINE =
  /\b(?:llama_[a-z_]+|llm_load_[a-z_]+|load_tensors|print_info|ggml_[a-z_]+|sched_reserve|common_init_[a-z_]+|device_info|system_info):|\bbuffer size\s*=|\boffloaded \d+\/\d+ layers|\bslots are idle|\bn_slots\s*=|\bnew slot\b|-> Slot \d|\bbuild info\b/;
const V_TYPES_WITHOUT_FLASH = /^(f16|bf16|f32)$/;

/**
 * A pasted log is untrusted text. Every pattern here and in log-facts.ts costs time linear in a
 * line's length (test/unit/log-pattern-cost.test.ts); the limits bound the work besides.
 * llama.cpp's lines are under 400 characters and its startup facts come first, so only the start
 * of each line, and of the log, is read.
 */
export const EXPLAIN_MAX_CHARS = 4 * 2 ** 20;
export const EXPLAIN_LINE_CHARS = 512;

// A device's buffers, and the pinned host buffers a backend allocates ("CUDA_Host", "ROCm_Host"), which in a
// pasted tail may be the only name of the backend left.
const BACKEND_OF_DEVICE: readonly [RegExp, string][] = [
  [/^CUDA(?:\d|_Host$)/, 'cuda'],
  [/^ROCm(?:\d|_Host$)/, 'rocm'],
  [/^Vulkan(?:\d|_Host$)/, 'vulkan'],
  [/^Metal/, 'metal'],
  [/^SYCL(?:\d|_Host$)/, 'sycl'],
];

function flashAttentionState(value: string): LogExplanation['flashAttention'] {
  if (/^(1|on|enabled|true)$/i.test(value)) return 'on';
  if (/^(0|off|disabled|false)$/i.test(value)) return 'off';
  return /^auto$/i.test(value) ? 'auto' : null;
}

/** The build a line names, in the one-line form of most builds or the server's "build info" entry; null when it names none. */
function readBuild(line: string): string | null {
  const built = BUILD.exec(line);
  if (built) return built[2] ? `${built[1]} with ${built[2]}` : built[1]!;
  if (!line.includes('build info')) return null;
  const number = BUILD_ENTRY_NUMBER.exec(line)?.[1];
  const commit = BUILD_ENTRY_COMMIT.exec(line)?.[1];
  return number && commit ? `${number} (${commit})` : null;
}

/** "NVIDIA H200" from "NVIDIA H200 (143166 MiB, 110773 MiB free)": the name without the memory the device list adds. */
function listedDeviceName(rest: string): string {
  const memory = rest.lastIndexOf(' (');
  return (memory > 0 && rest.endsWith(' MiB free)') ? rest.slice(0, memory) : rest).trim();
}

/** The GPUs the log lists, whichever backend's device lines name them, the devices it says it used, and which lines named one. */
function scanDevices(lines: readonly string[]) {
  const devices: LogExplanation['devices'] = [];
  const used = new Set<string>();
  const deviceLines = new Set<number>();
  let cudaFamily = 'CUDA';
  const addDevice = (index: number, id: string, name: string, integrated: boolean | null) => {
    deviceLines.add(index);
    if (!devices.some((device) => device.id === id)) devices.push({ id, name, integrated, used: null });
  };
  lines.forEach((line, index) => {
    const family = CUDA_FAMILY.exec(line);
    if (family) cudaFamily = family[1]!;
    const cuda = CUDA_DEVICE.exec(line);
    if (cuda) addDevice(index, `${cudaFamily}${cuda[1]}`, cuda[2]!.trim(), null);
    const vulkan = VULKAN_DEVICE.exec(line);
    if (vulkan) addDevice(index, `Vulkan${vulkan[1] ?? vulkan[2]}`, vulkan[3]!.trim(), vulkan[4] === '1');
    const metal = METAL_DEVICE.exec(line);
    if (metal) addDevice(index, 'Metal', metal[1]!, true);
    const listed = LISTED_DEVICE.exec(line);
    if (listed) addDevice(index, listed[1]!, listedDeviceName(listed[2]!), null);
    const using = USING_DEVICE.exec(line);
    if (using) used.add(using[1]!);
  });
  return { devices, used, deviceLines };
}

/** The slots a log's slot lines show, for a tail that holds them without the slot count: how many, and each one's context. */
function readSlot(line: string): { index: number; context: number } | null {
  const slot = SLOT_2023.exec(line) ?? NEW_SLOT.exec(line);
  return slot ? { index: Number(slot[1]), context: Number(slot[2]) } : null;
}

/** What the log's lines say about the build and the settings: KV types, flash attention, context per sequence and slots. */
function scanSettings(lines: readonly string[]) {
  let build: string | null = null;
  let kvTypes: LogExplanation['kvTypes'] = null;
  let flashAttention: LogExplanation['flashAttention'] = null;
  let perSequence: number | null = null;
  let slots: number | null = null;
  let slotsSeen = 0;
  let slotContext: number | null = null;
  for (const line of lines) {
    build ??= readBuild(line);
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
    const slot = readSlot(line);
    if (slot) [slotsSeen, slotContext] = [Math.max(slotsSeen, slot.index + 1), slot.context];
  }
  return { build, kvTypes, flashAttention, perSequence: perSequence ?? slotContext, slots: slots ?? (slotsSeen || null) };
}

/** The backend a set of buffer or device names belongs to: CUDA0 is cuda, Vulkan_Host vulkan; null when none is a GPU's. */
function backendOfNames(names: readonly string[]): string | null {
  return BACKEND_OF_DEVICE.find(([pattern]) => names.some((name) => pattern.test(name)))?.[1] ?? null;
}

/**
 * Marks each device used or not, and names the backend: the one whose devices held the weights; for a
 * text without weight buffers (a pasted tail, a head), the one whose devices the log lists or whose KV
 * and compute buffers it prints.
 */
function placeDevices(
  devices: LogExplanation['devices'],
  used: ReadonlySet<string>,
  buffersMib: Readonly<Record<string, number>>,
): LogExplanation['backend'] {
  const bufferDevice = (key: string) => key.slice(0, key.lastIndexOf(' '));
  const modelDevices = Object.keys(buffersMib)
    .filter((key) => key.endsWith(' model'))
    .map(bufferDevice);
  // A device is used when the log says so, or when it holds weights; a log that names neither leaves it unknown.
  for (const device of devices) {
    // 2024 Vulkan builds name a buffer after the device ("Radeon RX 570 Series"), without the driver the device line adds.
    const holdsWeights = modelDevices.some((name) => name === device.id || name === device.name || device.name.startsWith(`${name} (`));
    device.used = used.has(device.id) || holdsWeights ? true : used.size > 0 || modelDevices.length > 0 ? false : null;
  }
  return (
    backendOfNames(modelDevices) ??
    backendOfNames(devices.map((device) => device.id)) ??
    backendOfNames(Object.keys(buffersMib).map(bufferDevice)) ??
    (modelDevices.length > 0 ? 'cpu' : null)
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

/** A line llama.cpp printed: one of its own prefixes or phrases, or a ready line (device lines are counted where they are read). */
function isLlamaLine(line: string): boolean {
  return LLAMA_LINE.test(line) || listeningAddress(line) !== null;
}

type Explained = Omit<LogExplanation, 'missing' | 'llamaLines' | 'lines'>;

/**
 * What the text does not say, each with what stays unknown: a pasted tail has no build or device
 * line, a head no ready line. Said so that a missing fact is not read as a fact ("no devices").
 */
function missingFacts(explained: Explained): string[] {
  const { context } = explained;
  const absent: [boolean, string][] = [
    [explained.build === null, 'no build line in this text: the engine build is unknown'],
    [explained.devices.length === 0, 'no device line: which GPUs llama.cpp found is unknown'],
    [explained.layers === null, 'no offloaded-layers line: how many layers went to the GPU is unknown'],
    [!explained.offload?.weights, 'no model buffer line: where the weights went is unknown'],
    [Object.keys(explained.kvMib).length === 0 && explained.kvTypes === null, 'no KV cache line: the KV cache size and types are unknown'],
    [context.size === null, 'no context line: the total context size is unknown'],
    [explained.flashAttention === null, 'no flash attention line: whether flash attention was on is unknown'],
    [explained.slots === null, 'no slots line: how many requests it serves at once is unknown'],
    [
      explained.listeningOn === null,
      explained.fault
        ? 'no listening line: the server did not become ready in this text'
        : 'no listening line: whether the server became ready is unknown',
    ],
  ];
  return absent.filter(([isAbsent]) => isAbsent).map(([, said]) => said);
}

/** Splits a pasted text into the lines read, each cut to its first EXPLAIN_LINE_CHARS characters. */
function boundedLines(text: string): string[] {
  return text
    .slice(0, EXPLAIN_MAX_CHARS)
    .split(/\r?\n/)
    .map((line) => (line.length > EXPLAIN_LINE_CHARS ? line.slice(0, EXPLAIN_LINE_CHARS) : line));
}

/**
 * Reads a llama-server or llama.cpp log from any build (2023 to current formats, journald, docker or
 * other prefixes), whole or any part of it, into the facts that decide performance, the warnings a
 * user should act on, and what the text leaves unknown.
 */
export function explainLlamaLog(text: string): LogExplanation {
  const lines = boundedLines(text);
  const facts = parseLogFacts(lines);
  const { devices, used, deviceLines } = scanDevices(lines);
  const { build, kvTypes, flashAttention, perSequence, slots } = scanSettings(lines);
  const backend = placeDevices(devices, used, facts.buffersMib);
  const offload = logOffload(backend, facts);
  const warnings = logWarnings({ devices, offload, kvTypes, flashAttention }, facts, perSequence ?? facts.contextSize);
  const kvMib = Object.fromEntries(
    Object.entries(facts.buffersMib)
      .filter(([key]) => key.endsWith(' KV'))
      .map(([key, mib]) => [key.slice(0, -' KV'.length), mib]),
  );
  const explained: Explained = {
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
    listeningOn: facts.listeningOn,
    fault: classifyFault(lines),
    warnings,
  };
  return {
    ...explained,
    missing: missingFacts(explained),
    llamaLines: lines.filter((line, index) => deviceLines.has(index) || isLlamaLine(line)).length,
    lines: lines.length,
  };
}
