/** A workload set as written by the user, after schema validation. */
export interface Sampling {
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  seed?: number;
  stop?: string[];
  ignore_eos?: boolean;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A message of an agent exchange: the answer's calls given back with the scripted results. */
export type ExchangeMessage =
  | ChatMessage
  | {
      role: 'assistant';
      content: string | null;
      tool_calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

export type AcceptanceCheck =
  | { contains: string }
  | { regex: string }
  | { json_schema: Record<string, unknown> }
  | { exact: string }
  | { equals_reference: true }
  | { max_length: number }
  /** The answer calls this function, and every call it makes is valid (judged with the calls, not the text). */
  | { tool_call: string };

/** A function the model may call, in the OpenAI shape; `parameters` is the JSON Schema its arguments must match. */
export interface ToolDef {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface ResponseFormat {
  type: 'text' | 'json_object' | 'json_schema';
  json_schema?: { name?: string; schema: Record<string, unknown>; strict?: boolean };
}

export interface TurnDef {
  user: string;
  reference?: string;
}

export type ThinkTime = { fixed_ms: number } | { uniform_ms: [number, number] } | { exponential_ms: number };

export interface SessionDef {
  history?: 'actual' | 'reference';
  think_time?: ThinkTime;
}

/** An image a chat item shows the model: a file on this machine, or the image inline as a data URI. */
export type ImageDef = { file: string } | { url: string };

/** One adapter a request applies: its place among those the server loaded, and its scale. */
export interface LoraChoice {
  id: number;
  scale: number;
}

export interface WorkloadItemDef extends Sampling {
  id: string;
  messages?: ChatMessage[];
  prompt?: string;
  /** A conversation: turn k sends the system message, turns 1..k−1 with their answers, and turn k's user message. */
  turns?: TurnDef[];
  system?: string;
  /** Embeddings: the text, or texts, one request sends to /v1/embeddings (a workload of these is embeddings only). */
  input?: string | string[];
  /** Reranking: the query each of `documents` is scored against (a workload of these is reranking only). */
  query?: string;
  documents?: string[];
  response_format?: ResponseFormat;
  /** Functions offered with a chat request; the server is started with its chat template's tool support (--jinja). */
  tools?: ToolDef[];
  tool_choice?: ToolChoice;
  /** The LoRA adapters this request applies, by their place among the server's, and their scales (llama-server's per-request field). */
  lora?: LoraChoice[];
  /** Images shown with the item's last user message; the server needs the model's projector (the profile's projector). */
  images?: ImageDef[];
  /**
   * An agent exchange: each call the answer makes is given back as a `role: tool` message holding
   * this result for its function, and the model asked again, until it answers without a call or
   * `max_steps` requests were sent.
   */
  tool_results?: Record<string, string>;
  max_steps?: number;
  repeat?: number;
  weight?: number;
  accept?: AcceptanceCheck[];
}

export type GeneratorDef =
  | { synthetic: { count: number; input_tokens: number; output_tokens: number; seed?: number } }
  | {
      prefix_families: {
        prefixes: number;
        suffixes: number;
        prefix_tokens: number;
        suffix_tokens: number;
        output_tokens: number;
        seed?: number;
      };
    }
  | { long_document: { count: number; document_tokens: number; fact_position?: number; output_tokens: number; seed?: number } }
  | { sharegpt: { file: string; limit?: number; max_tokens?: number } }
  | { conversations: { count: number; turns: number; user_tokens: number; answer_tokens: number; seed?: number } }
  | { embeddings: { count: number; inputs_per_request: number; input_tokens: number; seed?: number } }
  | { trace: TraceGeneratorDef };

export interface TraceGeneratorDef {
  file: string;
  block_tokens?: number;
  speed?: number;
  start_s?: number;
  end_s?: number;
}

export interface WorkloadGroupDef {
  name: string;
  description?: string;
  items?: WorkloadItemDef[];
  generate?: GeneratorDef;
  accept?: AcceptanceCheck[];
  session?: SessionDef;
}

export interface WorkloadDef {
  name: string;
  description?: string;
  defaults?: Sampling;
  groups: WorkloadGroupDef[];
}

/** One request template after generators ran and defaults applied: what is sent and how it is judged. */
export interface ResolvedItem {
  id: string;
  group: string;
  messages: ChatMessage[] | null;
  prompt: string | null;
  sampling: Required<Pick<Sampling, 'max_tokens'>> & Omit<Sampling, 'max_tokens'>;
  response_format: ResponseFormat | null;
  repeat: number;
  weight: number;
  checks: AcceptanceCheck[];
  /** Input length the generator aimed for (per text, for embeddings), and whether it was met exactly by the server's tokenizer. */
  target_input_tokens: number | null;
  input_tokens_exact: boolean | null;
  /**
   * Set for a conversation item: one send runs every turn in order. Absent, not null, on
   * single requests, so their workloads keep the revision they had before conversations existed.
   */
  conversation?: ResolvedConversation;
  /** Set for a replayed trace request: its prompt is token ids built from the hash ids, sent at its arrival time. */
  replay?: ResolvedReplay;
  /** Set for an embeddings request: the texts sent to /v1/embeddings, one vector each. Absent on every other kind. */
  embedding_inputs?: string[];
  /** Set for a reranking request: the query and the documents sent to /v1/rerank. Absent on every other kind. */
  rerank?: { query: string; documents: string[] };
  /** Set where the item offers functions to call; absent otherwise, so older workloads keep their revision. */
  tools?: ToolDef[];
  tool_choice?: ToolChoice;
  lora?: LoraChoice[];
  /** Set where the item shows images: each a data URI, files read when the workload was resolved. Absent otherwise. */
  images?: string[];
  /** Set for an agent exchange: the scripted results and how many requests it may take. Absent otherwise. */
  agent?: ResolvedAgent;
}

export interface ResolvedAgent {
  tool_results: Record<string, string>;
  max_steps: number;
  think_time: ThinkTime;
}

export interface ResolvedReplay {
  hash_ids: number[];
  input_length: number;
  block_tokens: number;
  /** From the replay window's first request, already divided by the speed. */
  arrival_ms: number;
}

export interface ResolvedConversation {
  system: string | null;
  turns: { user: string; reference: string | null }[];
  history: 'actual' | 'reference';
  think_time: ThinkTime;
}

export interface ResolvedWorkload {
  name: string;
  description: string;
  /** sha256 of the resolved content: two runs with the same revision sent the same requests. */
  revision: string;
  groups: { name: string; items: ResolvedItem[] }[];
  source: string;
}
