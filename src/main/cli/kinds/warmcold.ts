import { positiveInteger } from '../args';
import type { KindFlags } from './kind-flags';
import type { CliKind } from './cli-kind';
import { WARMCOLD_TEXT } from './warmcold-text';

/** --cold-starts N and --skip-cache-reset: how the cold conditions are made. */
const WARMCOLD_FLAGS: KindFlags<'warmcold'> = {
  flags: { 'cold-starts': { type: 'string' }, 'skip-cache-reset': { type: 'boolean' }, fixed: { type: 'boolean' } },
  fromFlags: (values) => {
    const coldStarts = values['cold-starts'];
    return {
      fields: {
        coldStarts: typeof coldStarts === 'string' ? positiveInteger('cold-starts', coldStarts, 1) : null,
        skipCacheReset: values['skip-cache-reset'] === true,
        fixed: values.fixed === true,
      },
    };
  },
};

export const WARMCOLD_CLI: CliKind<'warmcold'> = { text: WARMCOLD_TEXT, options: WARMCOLD_FLAGS };
