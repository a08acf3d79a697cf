import { describe, it } from 'vitest';
import { AA_DRIFTS, expectFewFalseVerdicts } from './verdict-simulation.helpers';

// The other half of the A/A cells of verdict-simulation.test.ts, in its own file so that both halves run at once.
describe('verdicts: false-verdict rate when nothing differs (A/A), 32 requests per window', () => {
  it.each(AA_DRIFTS)(
    'window drift sd %s: at most 6 % of experiments call anything faster or slower',
    (driftSd) => expectFewFalseVerdicts(driftSd, 32),
    120_000,
  );
});
