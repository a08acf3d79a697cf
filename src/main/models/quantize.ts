import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { isFolder, pathExists } from '../core/exists';
import { runToCompletion } from '../core/process';
import { describeModel } from './model-library';
import { NEEDS_IMPORTANCE_MATRIX } from './quantize-help';

/**
 * Runs llama-quantize from `source` to `target`. Writes to a temporary name and renames on
 * success, so an interrupted quantization never leaves a truncated model behind.
 */
export async function quantizeModel(options: {
  quantizeBinary: string;
  source: string;
  target: string;
  type: string;
  threads?: number;
  signal?: AbortSignal;
  onProgress?: (tensorsDone: number, tensorsTotal: number | null) => void;
}): Promise<void> {
  if (await pathExists(options.target))
    throw new AppError(ErrorCode.InvalidInput, `${options.target} already exists; refusing to overwrite it`);
  const temporary = `${options.target}.partial`;
  await fs.promises.rm(temporary, { force: true });
  let done = 0;
  let total: number | null = null;
  const args = [options.source, temporary, options.type];
  if (options.threads) args.push(String(options.threads));
  const result = await runToCompletion(options.quantizeBinary, args, {
    signal: options.signal,
    onLine: (line) => {
      // "[  12/  39]  blk.0.attn_q.weight - [  512,   512,     1,     1], type =    f16, converting to q4_K .. size = ..."
      const match = /^\[\s*(\d+)\/\s*(\d+)\]/.exec(line);
      if (match) {
        done = Number(match[1]);
        total = Number(match[2]);
        options.onProgress?.(done, total);
      }
    },
  });
  if (options.signal?.aborted) {
    await fs.promises.rm(temporary, { force: true });
    throw new AppError(ErrorCode.RequestFailed, `quantizing to ${options.type} was cancelled; no file was written`);
  }
  if (result.code !== 0 || !(await pathExists(temporary))) {
    await fs.promises.rm(temporary, { force: true });
    throw new AppError(
      ErrorCode.Internal,
      `llama-quantize ${options.type} failed (exit ${result.code ?? result.signal}):\n${result.output.split('\n').slice(-15).join('\n')}`,
    );
  }
  await fs.promises.rename(temporary, options.target);
}

const QUANT_TYPE = /^[A-Z0-9_]+$/i;

/** Types like Q8_0 or Q4_K_M, or an error naming what was given. */
export function checkQuantTypes(types: readonly string[]): string[] {
  if (types.length === 0 || types.some((type) => typeof type !== 'string' || !QUANT_TYPE.test(type))) {
    throw new AppError(ErrorCode.InvalidInput, `quantization types must look like Q8_0 or Q4_K_M, got ${JSON.stringify(types)}`);
  }
  const matrixTypes = types.filter((type) => NEEDS_IMPORTANCE_MATRIX.has(type.toUpperCase()));
  if (matrixTypes.length > 0)
    throw new AppError(
      ErrorCode.InvalidInput,
      `${matrixTypes.join(', ')} can only be made with an importance matrix, which Infer Lab does not compute; choose IQ3_XXS or a K-quant such as Q2_K or Q3_K_S instead`,
    );
  return [...types];
}

/** A quantization's file name: the source's without its float suffix, and the type: model-f16.gguf → model-q4_k_m.gguf. */
export function quantizedFileName(source: string, type: string): string {
  return `${path.basename(source, '.gguf').replace(/[-.](f16|f32|bf16)$/i, '')}-${type.toLowerCase()}.gguf`;
}

/**
 * What a quantization will write, checked before anything runs: a valid source, an existing
 * output folder (the source's by default), and no file that would be overwritten (named by quantizedFileName).
 */
export async function planQuantization(
  source: string,
  types: readonly string[],
  outDir: string | null,
): Promise<{ source: string; targets: { type: string; target: string }[] }> {
  checkQuantTypes(types);
  const described = await describeModel(source);
  if (!described.valid) throw new AppError(ErrorCode.InvalidInput, `${source}: ${described.invalidReason}`);
  const folder = path.resolve(outDir ?? path.dirname(source));
  if (!(await isFolder(folder))) throw new AppError(ErrorCode.NotFound, `the output folder ${folder} is not a folder`);
  const targets = types.map((type) => ({ type, target: path.join(folder, quantizedFileName(source, type)) }));
  const present = await Promise.all(targets.map((item) => pathExists(item.target)));
  const existing = targets.filter((_, index) => present[index]);
  if (existing.length > 0) {
    throw new AppError(
      ErrorCode.InvalidInput,
      `refusing to overwrite ${existing.map((item) => item.target).join(', ')}; delete it or choose another output folder`,
    );
  }
  return { source, targets };
}
