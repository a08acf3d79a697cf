import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { runToCompletion } from '../core/process';

export interface KldResult {
  kldMean: number | null;
  sameTopP: number | null;
  /** Chunks of `context` tokens llama-perplexity scored. */
  chunks?: number | null;
  /** Why the figures are missing, when they are. */
  error?: string;
}

/** Reads "Mean    KLD:   0.005834 ± …" and "Same top p: 71.284 ± 1.720 %" from llama-perplexity. */
export function parseKldOutput(output: string): KldResult {
  const kld = /Mean\s+KLD:\s+([\d.eE+-]+)/.exec(output);
  const same = /Same top p:\s+([\d.]+)/.exec(output);
  const chunks = /computing over (\d+) chunks/.exec(output);
  return {
    kldMean: kld ? Number(kld[1]) : null,
    sameTopP: same ? Number(same[1]) / 100 : null,
    ...(chunks ? { chunks: Number(chunks[1]) } : {}),
  };
}

/**
 * KL divergence and "same top token" of each file against the baseline, with
 * llama-perplexity at `context` tokens per chunk: the baseline's logits are saved once, every
 * candidate is scored against them on the same text. llama-perplexity needs two chunks at
 * least; text that tokenizes shorter gives no figure and says so, rather than repeating the
 * text (a repeated text is predictable from its first copy and understates the divergence).
 */
export async function measureKld(options: {
  perplexityBinary: string;
  baseline: string;
  /** Extra llama-perplexity flags of the baseline and of each candidate (a KV cache type, say); none by default. */
  baselineArgs?: string[];
  candidates: { name: string; file: string; args?: string[] }[];
  text: string;
  tokens: number | null;
  context: number;
  threads: number;
  signal?: AbortSignal;
}): Promise<Map<string, KldResult>> {
  const results = new Map<string, KldResult>();
  const minimum = 2 * options.context;
  if (options.tokens !== null && options.tokens < minimum) {
    const error = `the evaluation text has ${options.tokens} tokens; KLD at context ${options.context} needs at least ${minimum}`;
    for (const candidate of options.candidates) results.set(candidate.name, { kldMean: null, sameTopP: null, error });
    return results;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-kld-'));
  try {
    const textFile = path.join(dir, 'text.txt');
    fs.writeFileSync(textFile, options.text);
    const logits = path.join(dir, 'baseline.kld');
    const common = [
      '-f',
      textFile,
      '-c',
      String(options.context),
      '-b',
      String(options.context),
      '-t',
      String(options.threads),
      '--kl-divergence-base',
      logits,
    ];
    const base = await runToCompletion(options.perplexityBinary, ['-m', options.baseline, ...common, ...(options.baselineArgs ?? [])], {
      signal: options.signal,
    });
    const short = /you need at least (\d+) tokens[^\n]*\n[^\n]*tokenizes to only (\d+) tokens/.exec(base.output);
    if (short) {
      const error = `the evaluation text has ${short[2]} tokens; KLD at context ${options.context} needs at least ${short[1]}`;
      for (const candidate of options.candidates) results.set(candidate.name, { kldMean: null, sameTopP: null, error });
      return results;
    }
    if (base.code !== 0)
      throw new AppError(
        ErrorCode.Internal,
        `llama-perplexity on the baseline failed (exit ${base.code}):\n${base.output.split('\n').slice(-10).join('\n')}`,
      );
    for (const candidate of options.candidates) {
      let result: KldResult = { kldMean: null, sameTopP: null };
      // One retry: a failure here should be rare and must not silently drop a figure.
      for (let attempt = 0; attempt < 2 && result.kldMean === null && !options.signal?.aborted; attempt++) {
        const run = await runToCompletion(
          options.perplexityBinary,
          ['-m', candidate.file, ...common, ...(candidate.args ?? []), '--kl-divergence'],
          {
            signal: options.signal,
          },
        );
        result =
          run.code === 0
            ? parseKldOutput(run.output)
            : {
                kldMean: null,
                sameTopP: null,
                error: `llama-perplexity exit ${run.code ?? run.signal}: ${run.output.split('\n').slice(-3).join(' ')}`,
              };
        if (run.code === 0 && result.kldMean === null) result.error = 'llama-perplexity printed no KLD figure';
      }
      results.set(candidate.name, result);
    }
    return results;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
