import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { didYouMean } from '../../core/closest-name';
import { shellAccess } from '../../services/access';
import { parseOptions, positiveInteger, type CommandHandler } from '../args';
import { experimentTable } from '../experiment-table';
import { formatTable } from '../format';
import { openCliServices } from '../service-context';
import { EXPERIMENTS_USAGE } from '../usage';

/** The outcome column: the recommendation's first clause, enough to tell experiments apart in a list. */
function outcome(recommendation: string | null): string {
  if (recommendation === null) return '—';
  const first = recommendation.split(/(?<=[.;])\s/)[0]!.replace(/[.;]$/, '');
  return first.length > 100 ? `${first.slice(0, 99)}…` : first;
}

/**
 * `inferlab experiments list`: the stored experiments, newest first, as the Experiments view lists them;
 * `inferlab experiments show ID`: one experiment's tables again, as its command printed them when it ended.
 */
export const experimentsCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, db: { type: 'string' }, limit: { type: 'string' } },
    EXPERIMENTS_USAGE,
    true,
  );
  const [action = 'list', id] = positionals;
  if (action !== 'list' && action !== 'show')
    throw new AppError(
      ErrorCode.Usage,
      `Unknown experiments action "${action}"${didYouMean(action, ['list', 'show'])}\n\nUsage: ${EXPERIMENTS_USAGE}`,
    );
  if (action === 'show' && !id)
    throw new AppError(ErrorCode.Usage, `experiments show needs an experiment ID\n\nUsage: ${EXPERIMENTS_USAGE}`);
  const limit = positiveInteger('limit', values.limit, 50);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const experiments = container.services.experiments;
    if (action === 'list') {
      const items = (await experiments.list()).slice(0, limit);
      if (values.json) process.stdout.write(`${JSON.stringify(items, null, 2)}\n`);
      else if (items.length === 0) process.stdout.write('No experiments stored yet: inferlab demo, or inferlab experiment KIND ...\n');
      else
        process.stdout.write(
          `${formatTable([
            ['experiment', 'started', 'kind', 'status', 'outcome'],
            ...items.map((item) => [
              item.experimentId.slice(0, 8),
              item.createdAt.replace('T', ' ').slice(0, 19),
              item.kind,
              item.status,
              outcome(item.recommendation),
            ]),
          ])}\n`,
        );
      return 0;
    }
    const result = await experiments.get(id!);
    if (!result)
      throw new AppError(
        ErrorCode.NotFound,
        `Experiment ${id} has no result to show: it did not finish (its finished windows are stored as runs: inferlab runs list)`,
      );
    process.stdout.write(values.json ? `${JSON.stringify(result, null, 2)}\n` : `${experimentTable(result)}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};
