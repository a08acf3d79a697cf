import type { ServerFaultCode } from '../../../shared/contract/server';
import { PORT_TAKEN_HINT } from '../../core/ports';
import type { InputEmbeddingShape } from '../../../shared/weight-placement';

/** Facts llama-server prints while loading, read back as part of the effective configuration. */
export interface LlamaLogFacts {
  layersOffloaded: { offloaded: number; total: number } | null;
  buffersMib: Record<string, number>;
  trainedContext: number | null;
  contextSize: number | null;
  /** The input token-embedding table's shape (n_vocab × n_embd) from the model metadata. */
  inputEmbedding: InputEmbeddingShape | null;
  listening: boolean;
  /** The address the ready line names ("127.0.0.1:8080"); null before the server is ready. */
  listeningOn: string | null;
}

const OFFLOADED = /offloaded (\d+)\/(\d+) layers to GPU/;
// Every build's buffer lines: "load_tensors:   CPU_Mapped model buffer size =    29.37 MiB", the 2024
// "llm_load_tensors:      CUDA0 buffer size =  5434.38 MiB" (no kind: weights), a device named in full
// ("Radeon RX 570 Series buffer size"), and decimal commas where the C locale is not in force ("14674,45").
// Early 2024 builds also print the host `input` buffer of the graph inputs. The name starts and ends with a
// non-blank and takes a run of blanks inside it whole: written `\s*([^:=]+?)\s+`, three quantifiers shared every
// space of a run, and a line of 512 spaces took 35-70 ms (its length cubed).
const BUFFER =
  /(?:^|:)\s*([^:=\s](?:[^:=\s]|\s+(?!\s))*?)\s+(?:(model|KV|compute|output|input|RS)\s+)?buffer size\s*=\s*(\d+(?:[.,]\d+)?)\s*MiB/;
// "n_ctx_train = 4096" in the metadata, "n_ctx_train (163840)" in the warning that the context is below it.
const TRAINED_CONTEXT = /n_ctx_train\s*(?:=\s*|\(\s*)(\d+)/;
// "llama_context:", and in older builds "llama_new_context_with_model:" or "llama_init_from_model:".
const CONTEXT = /(?:llama_context|llama_new_context_with_model|llama_init_from_model):\s+n_ctx\s*=\s*(\d+)/;

// "print_info: n_vocab = 32768" (2024: "llm_load_print_meta: n_vocab = 32000"); not n_embd_head_k and kin.
const VOCABULARY = /\bn_vocab\s*=\s*(\d+)/;
const EMBEDDING_WIDTH = /\bn_embd\s*=\s*(\d+)/;

/** A MiB figure as any locale prints it. */
function mib(text: string): number {
  return Number(text.replace(',', '.'));
}

export function parseLogFacts(lines: readonly string[]): LlamaLogFacts {
  const facts: LlamaLogFacts = {
    layersOffloaded: null,
    buffersMib: {},
    trainedContext: null,
    contextSize: null,
    inputEmbedding: null,
    listening: false,
    listeningOn: null,
  };
  let vocabulary: number | null = null;
  let width: number | null = null;
  for (const line of lines) {
    const offloaded = OFFLOADED.exec(line);
    if (offloaded) facts.layersOffloaded = { offloaded: Number(offloaded[1]), total: Number(offloaded[2]) };
    const buffer = BUFFER.exec(line);
    if (buffer) {
      const key = `${buffer[1]} ${buffer[2] ?? 'model'}`;
      facts.buffersMib[key] = (facts.buffersMib[key] ?? 0) + mib(buffer[3]!);
    }
    const trained = TRAINED_CONTEXT.exec(line);
    if (trained) facts.trainedContext = Number(trained[1]);
    const context = CONTEXT.exec(line);
    if (context) facts.contextSize = Number(context[1]);
    const address = facts.listening ? null : listeningAddress(line);
    if (address !== null) Object.assign(facts, { listening: true, listeningOn: address });
    const vocabularyLine = VOCABULARY.exec(line);
    if (vocabularyLine) vocabulary = Number(vocabularyLine[1]);
    const widthLine = EMBEDDING_WIDTH.exec(line);
    if (widthLine) width = Number(widthLine[1]);
  }
  if (vocabulary && width) facts.inputEmbedding = { vocabulary, width };
  return facts;
}

export const LOAD_PROGRESS =
  /load_tensors|llama_model_loader|load_model|llama_context|llama_new_context_with_model|llama_init_from_model|llama_kv_cache|print_info|warming up|sched_reserve/;
// Every build's ready line, printed once the model is loaded: "main: server is listening on http://127.0.0.1:8080 -
// starting the main loop" (late 2024 without the scheme, 2026 under "srv  llama_server:"), the 2023 "llama server
// listening at http://0.0.0.0:8080", and the "HTTP server listening" entry of 2023 (JSON) and mid-2024 builds
// ("INFO [ main] HTTP server listening | ... port="8080" hostname="localhost"") that carries the address as fields.
// The 2024-2025 "main: HTTP server is listening, hostname: ..." comes before the model loads: not ready yet.
const LISTENING_ON = /listening (?:on|at) (?:https?:\/\/)?([\w.[\]:-]+:\d+)/;
// An address without a port (a socket path), kept as printed.
const LISTENING_URL = /listening on (https?:\/\/\S+)/;
const LISTENING_ENTRY = /\bHTTP server listening\b/;
const ENTRY_HOST = /\bhostname"?\s*[:=]\s*"?([\w.[\]:-]+)/;
const ENTRY_PORT = /\bport"?\s*[:=]\s*"?(\d+)/;
export const LISTENING = new RegExp([LISTENING_ON, LISTENING_URL, LISTENING_ENTRY].map((pattern) => pattern.source).join('|'));

/** The address a ready line names, "host:port" as printed; null when the line is not a ready line. */
export function listeningAddress(line: string): string | null {
  const listeningOn = LISTENING_ON.exec(line) ?? LISTENING_URL.exec(line);
  if (listeningOn) return listeningOn[1]!;
  if (!LISTENING_ENTRY.test(line)) return null;
  return [ENTRY_HOST.exec(line)?.[1], ENTRY_PORT.exec(line)?.[1]].filter(Boolean).join(':');
}

interface FaultRule {
  code: ServerFaultCode;
  pattern: RegExp;
  hint: string;
}

// A signature "A .* B" is written "^(?:(?!A).)*A.*B" with the `m` flag: tried from every A, `.*` would scan the
// rest of the line once per A, the square of the length of a line that repeats A. Only the first A of a line (`m`:
// or after any line terminator, where `.` stops too) is tried; it ends first, so a B after any other A follows it
// as well. An A holding a `\w+` starts at a word (`\b`): each of its places in one long word would scan the word.

/** Known failure signatures in llama-server's log, each with the one-line fix. */
const FAULT_RULES: readonly FaultRule[] = [
  {
    code: 'binary_missing',
    pattern: /^spawn failed: .*(ENOENT|EACCES)/,
    hint: 'The llama-server binary is missing or not executable; run ./bin/inferlab setup or fix the configured path.',
  },
  {
    code: 'out_of_memory',
    pattern:
      /out of memory|failed to allocate|cudaMalloc failed|unable to allocate|^(?:(?!\bggml_backend_\w+_buffer_type_alloc_buffer: allocating ).)*\bggml_backend_\w+_buffer_type_alloc_buffer: allocating .* failed|std::bad_alloc/im,
    hint: 'Lower gpuLayers or contextSize, use a smaller KV cache type, or pick a smaller quantization.',
  },
  {
    code: 'bind_failed',
    pattern: /couldn't bind|address already in use|failed to bind|bind\(\) failed|exiting due to HTTP server error/i,
    hint: PORT_TAKEN_HINT,
  },
  {
    code: 'unsupported_flag',
    pattern: /error: (invalid|unknown) argument|error while handling argument|unrecognized (option|argument)|invalid value for/i,
    hint: 'This llama-server build does not accept one of the flags or its value; fix it in extraFlags or update the engine.',
  },
  {
    code: 'model_not_found',
    pattern: /^(?:(?!failed to open ).)*failed to open .*No such file|No such file or directory/im,
    hint: 'The model file is missing; check the path or rescan the model library.',
  },
  {
    code: 'bad_model_file',
    pattern:
      /failed to load model|error loading model|gguf_init_from_file|invalid magic|^(?:(?!tensor ).)*tensor .* data is not within the file bounds|unknown model architecture|failed to read/im,
    hint: 'The model file is damaged, truncated or of an architecture this engine build does not support; re-download or re-quantize it.',
  },
];

export function classifyFault(lines: readonly string[]): { code: ServerFaultCode; hint: string } | null {
  for (const rule of FAULT_RULES) {
    if (lines.some((line) => rule.pattern.test(line))) return { code: rule.code, hint: rule.hint };
  }
  return null;
}
