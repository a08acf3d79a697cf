import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkQuantTypes } from '../../src/main/models/quantize';
import { parseQuantTypes } from '../../src/main/models/quantize-help';

// Recorded: the "allowed quantization types" part of `llama-quantize --help` from the engine build 80fb11a.
const help = fs.readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'llama-quantize-help-80fb11a.txt'), 'utf8');

describe('the quantization types a llama-quantize build offers', () => {
  it('lists every type once, in the build order, without aliases or COPY', () => {
    const types = parseQuantTypes(help);
    const names = types.map((entry) => entry.type);
    expect(names).toContain('Q4_K_M');
    expect(names).toContain('IQ4_XS');
    expect(names).toContain('TQ2_0');
    expect(names).toContain('BF16');
    expect(names).not.toContain('Q4_K');
    expect(names).not.toContain('COPY');
    expect(new Set(names).size).toBe(names.length);
    expect(names.indexOf('Q4_0')).toBeLessThan(names.indexOf('Q8_0'));
    expect(types.find((entry) => entry.type === 'Q4_K_M')).toEqual({
      type: 'Q4_K_M',
      description: '4.58G, +0.1754 ppl @ Llama-3-8B',
      needsImportanceMatrix: false,
    });
    expect(types.filter((entry) => entry.needsImportanceMatrix).map((entry) => entry.type)).toEqual([
      'IQ2_XXS',
      'IQ2_XS',
      'IQ2_S',
      'IQ1_S',
      'IQ1_M',
      'Q2_K_S',
    ]);
  });

  it('finds nothing in text that is not the list', () => {
    expect(parseQuantTypes('usage: llama-quantize [--help]\n  --pure  disable k-quant mixtures')).toEqual([]);
  });

  it('refuses, before llama-quantize starts, a type that needs an importance matrix, naming what to choose instead', () => {
    expect(() => checkQuantTypes(['Q4_K_M', 'iq2_xxs'])).toThrow(/iq2_xxs can only be made with an importance matrix.*Q2_K or Q3_K_S/);
    expect(checkQuantTypes(['Q4_K_M', 'IQ3_XXS'])).toEqual(['Q4_K_M', 'IQ3_XXS']);
  });
});
