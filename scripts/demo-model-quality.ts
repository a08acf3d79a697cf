/**
 * Measures how the synthetic demo model behaves under quantization, with the real engine:
 * writes demo-f16.gguf to a temporary folder, derives Q8_0 and Q4_K_M with llama-quantize,
 * then for each file starts llama-server (one at a time, 2 threads) and asks for greedy
 * completions of a fixed set of prompts, and runs llama-perplexity's KL divergence against
 * the F16 logits at context 512 on text the F16 model sampled itself (as `experiment quant`
 * does by default).
 *
 * Prints one table: per file, greedy token agreement with F16 (mean share of F16's tokens
 * reproduced before the first divergence), exact-match rate, mean first-divergence index
 * over the prompts that diverge, mean KLD and same-top-token rate; then the longest run of
 * one repeated token and the share of distinct tokens in F16's outputs, and two sample
 * greedy outputs. Not a test: run it after changing the demo model's weights.
 *
 *   node --import tsx scripts/demo-model-quality.ts [--design '{"headNorm":0.5}'] [--eval-text FILE] [--keep DIR]
 *
 * --design overrides fields of DEMO_WEIGHT_DESIGN for this run; --eval-text scores KLD on a
 * file instead (text the model never saw says how it does off its own path); --keep writes
 * the models to DIR and leaves them there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { engineCacheDir } from '../src/main/core/paths';
import { findFreePort } from '../src/main/core/ports';
import { ManagedProcess } from '../src/main/core/process';
import { readPinnedSourceRecord, sourceDirFor } from '../src/main/engines/llamacpp/engine-source';
import { locateEngine, toolPath } from '../src/main/engines/llamacpp/locate-engine';
import { tokenAgreement } from '../src/main/experiments/agreement';
import { measureKld } from '../src/main/experiments/kld';
import { quantizeModel } from '../src/main/models/quantize';
import { DEMO_MODEL_SHAPE, DEMO_WEIGHT_DESIGN, writeSyntheticModel, type DemoWeightDesign } from '../src/main/models/synthetic-model';

const THREADS = 2;
const PREDICT = 48;

/** Varied on purpose: prompts ending inside and outside the demo text's vocabulary, code, numbers, other languages. */
const RAW_PROMPTS = [
  'The old harbour',
  'Once upon a time, in a land far away,',
  'def fibonacci(n):\n    ',
  'The capital of France is',
  'Ingredients: 2 cups flour, 1 egg, a pinch of salt.',
  'In 1969, the first humans landed on the',
  'Dear Sir or Madam, I am writing to',
  'SELECT name, price FROM products WHERE',
  'Die Katze sitzt auf dem',
  'The keeper climbs the stairs and',
  '1, 2, 3, 4, 5,',
  'Quantum computers differ from classical ones because',
];
const CHAT_PROMPTS = [
  'Write a haiku about the sea.',
  'Explain what a GPU does in one paragraph.',
  'What is the weather like today?',
  'Summarize the plot of Hamlet.',
];
const EVAL_PROMPT =
  'Write a long, detailed essay about the history of maps and navigation, from the earliest charts to satellite positioning. Use several paragraphs.';

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

async function post<T>(baseUrl: string, route: string, body: unknown): Promise<T> {
  const response = await fetch(`${baseUrl}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${route}: HTTP ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

async function withServer<T>(serverPath: string, model: string, work: (baseUrl: string) => Promise<T>): Promise<T> {
  const port = await findFreePort();
  const server = new ManagedProcess(serverPath, [
    '-m',
    model,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '-c',
    '2048',
    '-np',
    '1',
    '-t',
    String(THREADS),
  ]);
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    for (let waited = 0; ; waited += 200) {
      if (waited > 60_000) throw new Error(`llama-server did not become ready:\n${server.logs.text(20)}`);
      const ok = await fetch(`${baseUrl}/health`).then(
        (response) => response.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return await work(baseUrl);
  } finally {
    await server.stop();
  }
}

async function greedy(baseUrl: string): Promise<Map<string, { tokens: number[]; text: string }>> {
  const prompts: [string, string][] = RAW_PROMPTS.map((prompt, index) => [`raw-${index}`, prompt]);
  for (const [index, content] of CHAT_PROMPTS.entries()) {
    const { prompt } = await post<{ prompt: string }>(baseUrl, '/apply-template', { messages: [{ role: 'user', content }] });
    prompts.push([`chat-${index}`, prompt]);
  }
  const outputs = new Map<string, { tokens: number[]; text: string }>();
  for (const [key, prompt] of prompts) {
    const response = await post<{ tokens: number[]; content: string }>(baseUrl, '/completion', {
      prompt,
      n_predict: PREDICT,
      temperature: 0,
      seed: 1,
      return_tokens: true,
      cache_prompt: false,
    });
    outputs.set(key, { tokens: response.tokens, text: response.content });
  }
  return outputs;
}

function longestRun(tokens: readonly number[]): number {
  let best = 0;
  let run = 0;
  tokens.forEach((token, index) => {
    run = index > 0 && tokens[index - 1] === token ? run + 1 : 1;
    best = Math.max(best, run);
  });
  return best;
}

const design: DemoWeightDesign = { ...DEMO_WEIGHT_DESIGN, ...(JSON.parse(argument('--design') ?? '{}') as Partial<DemoWeightDesign>) };
const { engine, problems } = await locateEngine();
if (!engine) throw new Error(`no llama-server: ${problems.join('; ')}`);
const record = readPinnedSourceRecord(engineCacheDir());
if (!record) throw new Error('the pinned llama.cpp source is not in the cache; run ./bin/inferlab setup');
const vocabFile = path.join(sourceDirFor(engineCacheDir(), record.commit), 'models', 'ggml-vocab-llama-spm.gguf');
const dir = argument('--keep') ?? fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-demo-quality-'));
fs.mkdirSync(dir, { recursive: true });

const files = [
  { name: 'f16', file: path.join(dir, 'demo-f16.gguf'), type: null },
  { name: 'q8_0', file: path.join(dir, 'demo-q8_0.gguf'), type: 'Q8_0' },
  { name: 'q4_k_m', file: path.join(dir, 'demo-q4_k_m.gguf'), type: 'Q4_K_M' },
];
for (const { file } of files) fs.rmSync(file, { force: true });
await writeSyntheticModel(files[0]!.file, vocabFile, DEMO_MODEL_SHAPE, { design });
for (const { file, type } of files.slice(1))
  await quantizeModel({
    quantizeBinary: toolPath(engine, 'llama-quantize')!,
    source: files[0]!.file,
    target: file,
    type: type!,
    threads: THREADS,
  });

const outputs = new Map<string, Map<string, { tokens: number[]; text: string }>>();
let evalText = '';
for (const { name, file } of files) {
  outputs.set(
    name,
    await withServer(engine.serverPath, file, async (baseUrl) => {
      if (name === 'f16' && !argument('--eval-text')) {
        const { prompt } = await post<{ prompt: string }>(baseUrl, '/apply-template', {
          messages: [{ role: 'user', content: EVAL_PROMPT }],
        });
        evalText = (
          await post<{ content: string }>(baseUrl, '/completion', {
            prompt,
            n_predict: 1408,
            temperature: 0.8,
            seed: 1,
            ignore_eos: true,
            cache_prompt: false,
          })
        ).content;
      }
      return greedy(baseUrl);
    }),
  );
}
const evalFile = argument('--eval-text');
if (evalFile) evalText = fs.readFileSync(evalFile, 'utf8');
const kld = await measureKld({
  perplexityBinary: toolPath(engine, 'llama-perplexity')!,
  baseline: files[0]!.file,
  candidates: files,
  text: evalText,
  tokens: null,
  context: 512,
  threads: THREADS,
});

const tokensOf = (name: string) => new Map([...outputs.get(name)!].map(([key, value]) => [key, value.tokens]));
const pct = (value: number | null | undefined) => (value == null ? '—' : `${(value * 100).toFixed(1)} %`);
const rows = [['file', 'agreement', 'exact match', 'first divergence (mean)', 'KLD', 'same top p']];
for (const { name } of files) {
  const agreement = tokenAgreement(tokensOf('f16'), tokensOf(name));
  const result = kld.get(name);
  rows.push([
    name,
    pct(agreement.mean),
    pct(agreement.exact_match_rate),
    agreement.first_divergence_index_mean?.toFixed(1) ?? '—',
    (result?.kldMean == null ? undefined : result.kldMean < 0.001 ? result.kldMean.toExponential(2) : result.kldMean.toFixed(4)) ??
      `— ${result?.error ?? ''}`,
    pct(result?.sameTopP),
  ]);
}
const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
process.stdout.write(`${rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ')).join('\n')}\n\n`);

const f16 = [...outputs.get('f16')!.values()];
const runs = f16.map((output) => longestRun(output.tokens));
const distinct = f16.map((output) => new Set(output.tokens).size / Math.max(1, output.tokens.length));
const distinctOutputs = new Set(f16.map((output) => output.tokens.join(','))).size;
process.stdout.write(
  `f16 outputs: ${f16.length} prompts, ${distinctOutputs} distinct outputs, longest run of one token ${Math.max(...runs)}, distinct-token share ${pct(Math.min(...distinct))}–${pct(Math.max(...distinct))}\n`,
);
process.stdout.write(
  `KLD text: ${evalText.length} characters ${evalFile ? `from ${evalFile}` : 'sampled from f16 (temperature 0.8, seed 1)'}, context 512; weights: ${JSON.stringify(design)}\n\n`,
);
for (const key of ['raw-1', 'chat-0']) process.stdout.write(`${key}: ${JSON.stringify(outputs.get('f16')!.get(key)!.text)}\n`);
if (!argument('--keep')) fs.rmSync(dir, { recursive: true, force: true });
