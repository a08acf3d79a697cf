import type { ConditionResult } from '../../../shared/contract/experiments';
import { formatMs, formatShare } from '../format';
import { agreementCell, kldCell, qualityLines } from '../quant-quality-lines';
import { parseQuantFiles } from '../../models/quant-files';
import { quantsFlag } from '../args';
import { constraintsFromFlags, kldTextFileFromFlags } from '../quant-flags';
import { quantFilesFromHub, type QuantsFromHub } from '../quant-from-hub';
import { listOf, text, type FlagValues, type KindFlags } from './kind-flags';
import type { CliKind } from './cli-kind';
import { QUANT_TEXT } from './quant-text';
import { usageLinesOf } from './kind-text';

/** The usage a mistaken flag of this kind is refused with. */
const QUANT_USAGE = usageLinesOf(QUANT_TEXT).join('\n       ');

/** The columns a quantization experiment adds to the condition table: file size, load time and quality against the baseline. */
const QUANT_COLUMNS = {
  header: ['size', 'load', 'token agreement', 'KLD', 'same top'],
  cells: (condition: ConditionResult) => [
    `${((condition.file_bytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
    formatMs(condition.load_ms),
    agreementCell(condition),
    kldCell(condition.kld_mean),
    formatShare(condition.same_top_p),
  ],
};

function quantsFromHubFlags(source: string, quants: string | undefined, usage: (message: string) => never): QuantsFromHub {
  if (!source.startsWith('hf:')) usage(`--from takes a hub name, hf:OWNER/REPO[@REVISION], got "${source}"`);
  if (quants === undefined) usage('--from needs --quants: two or more of the quantizations the repository has (Q8_0,Q4_K_M), or all');
  const chosen = quantsFlag(quants, QUANT_USAGE);
  if (chosen !== 'all' && chosen.length < 2) usage(`--quants needs two or more quantizations to compare, got "${quants}"`);
  return { source, quants: chosen };
}

/** What is compared: types made from --model (--quants), files named with --files, or a hub repository's files (--from). */
const QUANT_FLAGS: KindFlags<'quant'> = {
  flags: { quants: { type: 'string' }, files: { type: 'string' }, from: { type: 'string' }, fixed: { type: 'boolean' } },
  fromFlags: (values: FlagValues, { usage, slo }) => {
    const [model, filesText, from, quants] = (['model', 'files', 'from', 'quants'] as const).map((flag) => text(values, flag));
    if (filesText !== undefined && (model !== undefined || quants !== undefined))
      usage('--files replaces --model and --quants, and only in experiment quant');
    if (from !== undefined && (model !== undefined || filesText !== undefined))
      usage('--from replaces --model and --files, and only in experiment quant');
    const fromHub = from === undefined ? null : quantsFromHubFlags(from, quants, usage);
    const files = filesText === undefined ? null : parseQuantFiles(filesText).map((file) => ({ name: file.name, path: file.file }));
    if (!model && !files && !fromHub) usage('--model is required');
    const types = listOf(quants ?? 'f16,q8_0,q4_k_m').map((quant) => quant.toLowerCase());
    if (!files && !fromHub && (types.length < 2 || types.some((quant) => !/^[a-z0-9_]+$/.test(quant))))
      usage(`--quants needs two or more types like f16,q8_0,q4_k_m, got "${quants}"`);
    return {
      fields: {
        files,
        quants: fromHub ? [] : types,
        constraints: constraintsFromFlags(values as Parameters<typeof constraintsFromFlags>[0], slo),
        kldTextFile: kldTextFileFromFlags(values),
        fixed: values.fixed === true,
      },
      fromHub,
      replacesModel: files !== null || fromHub !== null,
    };
  },
};

export const QUANT_CLI: CliKind<'quant'> = {
  text: QUANT_TEXT,
  options: QUANT_FLAGS,
  // --from: the files compared are the hub repository's, planned and pulled once the services are open.
  fromHub: async (spec, request, { profile, container, progress, signal }) => {
    spec.files = await quantFilesFromHub(request, profile, container, progress, signal);
  },
  columns: QUANT_COLUMNS,
  lines: qualityLines,
};
