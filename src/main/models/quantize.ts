import fs from 'node:fs';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { runToCompletion } from '../core/process';

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
  if (fs.existsSync(options.target))
    throw new AppError(ErrorCode.InvalidInput, `${options.target} already exists; refusing to overwrite it`);
  const temporary = `${options.target}.partial`;
  fs.rmSync(temporary, { force: true });
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
    fs.rmSync(temporary, { force: true });
    throw new AppError(ErrorCode.RequestFailed, `quantizing to ${options.type} was cancelled; no file was written`);
  }
  if (result.code !== 0 || !fs.existsSync(temporary)) {
    fs.rmSync(temporary, { force: true });
    throw new AppError(
      ErrorCode.Internal,
      `llama-quantize ${options.type} failed (exit ${result.code ?? result.signal}):\n${result.output.split('\n').slice(-15).join('\n')}`,
    );
  }
  fs.renameSync(temporary, options.target);
}
