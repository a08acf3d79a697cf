import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import type { RunSummary } from '../../metrics/run-summary';
import { runManifest } from '../../store/export-run';
import { parseOptions, type CommandHandler } from '../args';
import { openCliStore } from '../store-context';
import { formatMs, formatTable } from '../format';
import { printSummary } from '../summary-table';
import { RUNS_USAGE, EXPORT_USAGE } from '../usage';

export const runsCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    { json: { type: 'boolean' }, db: { type: 'string' }, limit: { type: 'string' } },
    RUNS_USAGE,
    true,
  );
  const [action, id] = positionals;
  if (action !== 'list' && action !== 'show')
    throw new AppError(ErrorCode.Usage, `Unknown runs action "${action ?? ''}"\n\nUsage: ${RUNS_USAGE}`);
  const context = await openCliStore(values.db);
  try {
    const runs = context.store.runs;
    if (action === 'list') {
      const rows = runs.listRuns(Number(values.limit ?? 50));
      if (values.json) {
        process.stdout.write(
          `${JSON.stringify(
            rows.map((run) => ({
              run_id: run.id,
              kind: run.kind,
              status: run.status,
              status_reason: run.status_reason,
              started_at: run.started_at,
              model: run.model_ref,
              workload: run.workload_name,
              requests: runs.countRequests(run.id),
            })),
            null,
            2,
          )}\n`,
        );
      } else {
        process.stdout.write(
          `${formatTable([
            ['run', 'started', 'status', 'model', 'workload', 'requests', 'ttft p50'],
            ...rows.map((run) => {
              const summary = run.summary_json ? (JSON.parse(run.summary_json) as Partial<RunSummary> & { ttft_ms?: number }) : null;
              const ttft = summary?.metrics?.ttft_ms.p50 ?? summary?.ttft_ms ?? null;
              return [
                run.id.slice(0, 8),
                run.started_at.replace('T', ' ').slice(0, 19),
                run.status + (run.status_reason ? ` (${run.status_reason.slice(0, 40)})` : ''),
                run.model_ref ?? '—',
                run.workload_name ?? run.kind,
                String(runs.countRequests(run.id)),
                formatMs(ttft),
              ];
            }),
          ])}\n`,
        );
      }
      return 0;
    }
    if (!id) throw new AppError(ErrorCode.Usage, `runs show needs a run ID\n\nUsage: ${RUNS_USAGE}`);
    const run = runs.findRun(id);
    if (!run) throw new AppError(ErrorCode.NotFound, `No run ${id} in ${context.dbPath}`);
    const summary = run.summary_json ? (JSON.parse(run.summary_json) as RunSummary) : null;
    if (values.json) process.stdout.write(`${JSON.stringify({ manifest: runManifest(run), summary }, null, 2)}\n`);
    else if (summary && 'metrics' in summary) printSummary(summary);
    else process.stdout.write(`${JSON.stringify({ manifest: runManifest(run), summary }, null, 2)}\n`);
    return 0;
  } finally {
    context.store.close();
  }
};

export const exportCommand: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(args, { out: { type: 'string' }, db: { type: 'string' } }, EXPORT_USAGE, true);
  if (positionals.length !== 1 || !values.out)
    throw new AppError(ErrorCode.Usage, `export needs one run ID and --out DIR\n\nUsage: ${EXPORT_USAGE}`);
  // Loaded here, not at the top: `runs list` shares this module and must not load the services.
  const [{ openCliServices }, { shellAccess }] = await Promise.all([import('../service-context'), import('../../services/access')]);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const rendered = await container.services.runs.exportRun(positionals[0]!);
    const outDir = path.resolve(values.out);
    fs.mkdirSync(outDir, { recursive: true });
    const files: [string, string][] = [
      ['manifest.json', rendered.manifest],
      ['summary.json', rendered.summary],
      ['requests.jsonl', rendered.requestsJsonl],
      ['requests.csv', rendered.requestsCsv],
      ['telemetry.json', rendered.telemetry],
    ];
    for (const [name, content] of files) fs.writeFileSync(path.join(outDir, name), content);
    process.stdout.write(`${files.map(([name]) => path.join(outDir, name)).join('\n')}\n`);
    return 0;
  } finally {
    await container.dispose();
  }
};
