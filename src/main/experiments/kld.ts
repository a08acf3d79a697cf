import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { runToCompletion } from '../core/process';

export interface KldResult {
  kldMean: number | null;
  sameTopP: number | null;
  /** Why the figures are missing, when they are. */
  error?: string;
}

/** Reads "Mean    KLD:   0.005834 ± …" and "Same top p: 71.284 ± 1.720 %" from llama-perplexity. */
export function parseKldOutput(output: string): KldResult {
  const kld = /Mean\s+KLD:\s+([\d.eE+-]+)/.exec(output);
  const same = /Same top p:\s+([\d.]+)/.exec(output);
  return { kldMean: kld ? Number(kld[1]) : null, sameTopP: same ? Number(same[1]) / 100 : null };
}

/**
 * KL divergence and "same top token" of each quantization against the baseline, with
 * llama-perplexity: the baseline's logits are saved once, every candidate is scored
 * against them on the same text. The text is repeated until it covers enough windows.
 */
export async function measureKld(options: { perplexityBinary: string; baseline: string; candidates: { name: string; file: string }[]; text: string; threads: number; signal?: AbortSignal }): Promise<Map<string, KldResult>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-kld-'));
  try {
    const textFile = path.join(dir, 'text.txt');
    let text = options.text.trim() || 'The quick brown fox jumps over the lazy dog.';
    // llama-perplexity needs at least two context windows of text; 128-token windows, aim for 16 of them.
    while (text.split(/\s+/).length < 1600) text = `${text}\n${text}`;
    fs.writeFileSync(textFile, text);
    const logits = path.join(dir, 'baseline.kld');
    const common = ['-f', textFile, '-c', '128', '-b', '128', '-t', String(options.threads), '--kl-divergence-base', logits];
    const base = await runToCompletion(options.perplexityBinary, ['-m', options.baseline, ...common], { signal: options.signal });
    if (base.code !== 0) throw new AppError(ErrorCode.Internal, `llama-perplexity on the baseline failed (exit ${base.code}):\n${base.output.split('\n').slice(-10).join('\n')}`);
    const results = new Map<string, KldResult>();
    for (const candidate of options.candidates) {
      let result: KldResult = { kldMean: null, sameTopP: null };
      // One retry: a failure here should be rare and must not silently drop a figure.
      for (let attempt = 0; attempt < 2 && result.kldMean === null && !options.signal?.aborted; attempt++) {
        const run = await runToCompletion(options.perplexityBinary, ['-m', candidate.file, ...common, '--kl-divergence'], { signal: options.signal });
        result = run.code === 0 ? parseKldOutput(run.output) : { kldMean: null, sameTopP: null, error: `llama-perplexity exit ${run.code ?? run.signal}: ${run.output.split('\n').slice(-3).join(' ')}` };
        if (run.code === 0 && result.kldMean === null) result.error = 'llama-perplexity printed no KLD figure';
      }
      results.set(candidate.name, result);
    }
    return results;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
