import { loraAdapterEntry } from '../../../shared/lora-adapter-entry';
import type { ConditionResult } from '../../../shared/contract/experiments';
import type { AdapterServing } from '../../../shared/contract/experiment-kinds/adapter';
import { agreementCell, kldCell, qualityLines } from '../quant-quality-lines';
import { constraintsFromFlags, kldTextFileFromFlags } from '../quant-flags';
import { listOf, text, type FlagValues, type KindFlags } from './kind-flags';
import type { CliKind } from './cli-kind';
import { ADAPTER_TEXT } from './adapter-text';

/** The columns an adapter experiment adds to the condition table. */
const ADAPTER_COLUMNS = {
  header: ['adapter memory', 'load', 'token agreement', 'KLD', 'accepted'],
  cells: (condition: ConditionResult): string[] => [
    condition.lora === null || condition.lora === undefined
      ? '(base)'
      : condition.lora_mib == null
        ? '—'
        : `${condition.lora_mib.toFixed(2)} MiB${condition.lora.swapped ? ' (all loaded)' : ''}`,
    condition.server_load_ms == null ? '—' : `${condition.server_load_ms.toFixed(0)} ms`,
    agreementCell(condition),
    kldCell(condition.kld_mean),
    condition.acceptance && condition.acceptance.judged > 0 ? `${condition.acceptance.accepted}/${condition.acceptance.judged}` : '—',
  ],
};

const SERVINGS: readonly AdapterServing[] = ['own', 'swapped', 'both'];

/** --adapters, and the quality gates quant has (agreement and KLD gate only when given). */
const ADAPTER_FLAGS: KindFlags<'adapter'> = {
  flags: { adapters: { type: 'string' }, serving: { type: 'string' }, fixed: { type: 'boolean' } },
  insteadOf: { quants: 'experiment adapter takes --adapters', files: 'experiment adapter takes --model and --adapters' },
  fromFlags: (values: FlagValues, { slo, usage }) => {
    const adapters = listOf(text(values, 'adapters') ?? '').map(loraAdapterEntry);
    if (adapters.length === 0) usage('experiment adapter needs --adapters FILE[@SCALE],... (demo:lora for the demo adapter)');
    const serving = text(values, 'serving');
    if (serving !== undefined && !SERVINGS.includes(serving as AdapterServing))
      usage(`--serving takes ${SERVINGS.join(', ')}, got "${serving}"`);
    return {
      fields: {
        adapters,
        ...(serving === undefined ? {} : { serving: serving as AdapterServing }),
        // An adapter is chosen by speed unless --objective says otherwise (the gates' flags default it to memory, quant's choice).
        constraints: {
          ...constraintsFromFlags(values as Parameters<typeof constraintsFromFlags>[0], slo),
          ...(values.objective === undefined ? { objective: 'tpot' as const } : {}),
        },
        kldTextFile: kldTextFileFromFlags(values),
        fixed: values.fixed === true,
      },
    };
  },
};

export const ADAPTER_CLI: CliKind<'adapter'> = {
  text: ADAPTER_TEXT,
  options: ADAPTER_FLAGS,
  columns: ADAPTER_COLUMNS,
  lines: (result) => qualityLines(result),
};
