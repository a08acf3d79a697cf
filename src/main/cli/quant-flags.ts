import path from 'node:path';
import type { QualityGate, QuantConstraints } from '../../shared/contract/experiments';
import type { SloSpec } from '../../shared/contract/runs';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';

/**
 * The gate flags of `experiment quant`: --min-agreement F, --max-kld NATS, --acceptance-alpha A
 * (each `off` to switch the gate off), --min-acceptance F, --vram-budget MIB, --objective.
 * Unset flags keep the defaults, which are printed with the result.
 */
export function constraintsFromFlags(
  flags: {
    'min-agreement'?: string;
    'max-kld'?: string;
    'acceptance-alpha'?: string;
    'min-acceptance'?: string;
    'vram-budget'?: string;
    objective?: string;
  },
  slo: SloSpec | null,
): QuantConstraints {
  const disabledGates: QualityGate[] = [];
  const number = (
    flag: string,
    raw: string | undefined,
    gate: QualityGate | null,
    valid: (value: number) => boolean,
    expect: string,
  ): number | null => {
    if (raw === undefined) return null;
    if (gate && raw.trim().toLowerCase() === 'off') {
      disabledGates.push(gate);
      return null;
    }
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || !valid(value))
      throw new AppError(ErrorCode.Usage, `--${flag} must be ${expect}${gate ? ' or off' : ''}, got "${raw}"`);
    return value;
  };
  const fraction = (value: number) => value >= 0 && value <= 1;
  const objective = flags.objective ?? 'memory';
  if (objective !== 'memory' && objective !== 'tpot' && objective !== 'ttft')
    throw new AppError(ErrorCode.Usage, `--objective must be memory, tpot or ttft, got "${objective}"`);
  return {
    minAgreement: number('min-agreement', flags['min-agreement'], 'token agreement', fraction, 'a fraction from 0 to 1'),
    maxKld: number('max-kld', flags['max-kld'], 'kld', (value) => value >= 0, 'a KL divergence in nats, 0 or more'),
    acceptanceAlpha: number(
      'acceptance-alpha',
      flags['acceptance-alpha'],
      'acceptance',
      (value) => value > 0 && value < 0.5,
      'a significance level above 0 and below 0.5',
    ),
    minAcceptance: number('min-acceptance', flags['min-acceptance'], null, fraction, 'a fraction from 0 to 1'),
    vramBudgetMib: number(
      'vram-budget',
      flags['vram-budget'],
      null,
      (value) => Number.isInteger(value) && value > 0,
      'a whole number of MiB',
    ),
    slo,
    objective,
    disabledGates,
  };
}

/** --kld-text FILE, for the kinds with a KL-divergence pass: the text it scores instead of one the baseline generates. */
export const kldTextFileFromFlags = (flags: { 'kld-text'?: string | boolean | string[] }): string | null =>
  typeof flags['kld-text'] === 'string' ? path.resolve(flags['kld-text']) : null;
