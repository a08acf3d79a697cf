import path from 'node:path';
import { describeModel } from '../../../models/model-library';
import { quantizedFileName } from '../../../models/quantize';

/** Where each quantization of a GGUF file is read from or written to: the file itself when it already is that type, else its sibling `<stem>-<type>.gguf`. */
export async function quantFilesOf(base: string, quants: readonly string[]): Promise<{ quant: string; file: string }[]> {
  const baseType = (await describeModel(base)).quantization?.toLowerCase() ?? null;
  return quants.map((quant) => ({
    quant,
    file: quant === baseType ? base : path.join(path.dirname(base), quantizedFileName(base, quant)),
  }));
}
