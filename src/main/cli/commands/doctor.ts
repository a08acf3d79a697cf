import { runDoctor } from '../../doctor';
import { parseOptions, type CommandHandler } from '../args';
import { formatTable } from '../format';
import { DOCTOR_USAGE as USAGE } from '../usage';

export const doctorCommand: CommandHandler = async (args) => {
  const { values } = parseOptions(args, { json: { type: 'boolean' }, db: { type: 'string' } }, USAGE);
  const report = await runDoctor({ dbPath: values.db });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    const mark = { ok: 'ok', missing: 'MISSING', warning: 'warn' } as const;
    process.stdout.write(`${formatTable(report.checks.map((check) => [mark[check.status], check.label, check.detail]))}\n`);
    const fixes = report.checks.filter((check) => check.fix);
    if (fixes.length > 0) process.stdout.write(`\nTo fix:\n${fixes.map((check) => `  ${check.label}: ${check.fix}`).join('\n')}\n`);
  }
  return report.checks.some((check) => check.status === 'missing') ? 1 : 0;
};
