import type { ServerSnapshot } from '../../../shared/contract/server';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { PROFILE_FIELD_HELP } from '../../../shared/profile-fields';
import { parseOptions, type CommandHandler } from '../args';
import { openCliServices } from '../service-context';
import { shellAccess } from '../../services/access';
import { formatMs, formatTable } from '../format';
import { START_USAGE, PROFILE_USAGE, EXPLAIN_USAGE } from '../usage';
import { explainRefusal, logExplanationText } from '../log-explanation-text';
import fs from 'node:fs';

function stateLine(snapshot: ServerSnapshot, authorization: string | null): Record<string, unknown> {
  const line: Record<string, unknown> = {
    state: snapshot.state,
    id: snapshot.id,
    model: snapshot.modelRef,
    profile: snapshot.profileName,
    port: snapshot.port,
    pid: snapshot.pid,
  };
  if (snapshot.state === 'ready')
    Object.assign(line, {
      base_url: snapshot.baseUrl,
      authorization,
      cold_start: snapshot.coldStart,
      effective_config: snapshot.effectiveConfig,
    });
  if (snapshot.fault) line.fault = snapshot.fault;
  return line;
}

const start: CommandHandler = async (args, signal) => {
  const { values } = parseOptions(
    args,
    {
      model: { type: 'string' },
      engine: { type: 'string' },
      profile: { type: 'string' },
      set: { type: 'string', multiple: true },
      force: { type: 'boolean' },
      db: { type: 'string' },
      json: { type: 'boolean' },
    },
    START_USAGE,
  );
  if (!values.model) throw new AppError(ErrorCode.Usage, `--model is required\n\nUsage: ${START_USAGE}`);
  const engine = values.engine ?? 'llama.cpp';
  if (engine !== 'llama.cpp' && engine !== 'vllm' && engine !== 'sglang')
    throw new AppError(
      ErrorCode.Usage,
      `--engine must be llama.cpp, vllm or sglang, got "${engine}" (Ollama and other endpoints are not launched: point runs at them with --endpoint)`,
    );
  const container = await openCliServices(values.db, shellAccess());
  try {
    const profile = await container.servers.profileWith(values.profile ?? 'default', values.set ?? []);
    let lastState = '';
    const launched = await container.servers.launch(
      values.model,
      profile,
      { engine, force: values.force ?? false },
      {
        signal,
        onState: (snapshot, authorization) => {
          if (snapshot.state === lastState) return;
          lastState = snapshot.state;
          if (values.json) process.stdout.write(`${JSON.stringify(stateLine(snapshot, authorization))}\n`);
          else
            process.stderr.write(
              `server ${snapshot.state}${snapshot.port ? ` on port ${snapshot.port}` : ''}${snapshot.fault ? `: ${snapshot.fault.message}\n  hint: ${snapshot.fault.hint}` : ''}\n`,
            );
        },
      },
    );
    const { authorization, snapshot: ready } = launched;
    if (ready && ready.state !== 'ready') {
      if (!values.json) process.stderr.write(`${(ready.fault?.logTail ?? []).slice(-15).join('\n')}\n`);
      return 1;
    }
    if (ready && !values.json) {
      const cold = ready.coldStart;
      process.stderr.write(
        `${formatTable([
          ['url', ready.baseUrl ?? ''],
          // Other local users cannot use the server without it; the person at this shell may.
          ...(authorization ? [['authorization', authorization]] : []),
          ['pid', String(ready.pid)],
          ['spawn → listening', formatMs(cold?.spawnToListeningMs)],
          ['spawn → ready', formatMs(cold?.spawnToReadyMs)],
          ['ready → first token', formatMs(cold?.readyToFirstTokenMs)],
          ['context (total / per slot)', `${ready.effectiveConfig?.contextSize ?? '?'} / ${ready.effectiveConfig?.contextPerSlot ?? '?'}`],
          ['slots', String(ready.effectiveConfig?.slots ?? '?')],
        ])}\nPress Ctrl-C to stop.\n`,
      );
    }
    const stopRequested = new Promise<void>((resolve) =>
      signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    const outcome = await Promise.race([launched.crashed.then(() => 'crashed' as const), stopRequested.then(() => 'stop' as const)]);
    await launched.stop();
    return outcome === 'crashed' ? 1 : 0;
  } finally {
    await container.dispose();
  }
};

const profile: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(
    args,
    { from: { type: 'string' }, set: { type: 'string', multiple: true }, db: { type: 'string' }, json: { type: 'boolean' } },
    PROFILE_USAGE,
    true,
  );
  const [action, name] = positionals;
  if (!['list', 'show', 'save', 'delete'].includes(action ?? ''))
    throw new AppError(ErrorCode.Usage, `Unknown profile action "${action ?? ''}"\n\nUsage: ${PROFILE_USAGE}`);
  if (action !== 'list' && !name) throw new AppError(ErrorCode.Usage, `profile ${action} needs a NAME\n\nUsage: ${PROFILE_USAGE}`);
  const container = await openCliServices(values.db, shellAccess());
  try {
    const servers = container.services.servers;
    if (action === 'list') {
      const all = await servers.profiles();
      if (values.json) process.stdout.write(`${JSON.stringify(all)}\n`);
      else
        process.stdout.write(
          `${formatTable([['name', 'ctx', 'slots', 'batch/ubatch', 'ngl', 'fa', 'kv', 'threads'], ...all.map((p) => [p.name, String(p.contextSize), String(p.parallelSlots), `${p.batchSize}/${p.ubatchSize}`, String(p.gpuLayers), p.flashAttention, `${p.cacheTypeK}/${p.cacheTypeV}`, String(p.threads)])])}\n`,
        );
    } else if (action === 'show') {
      const shown = await container.servers.profileWith(name!, []);
      if (values.json) process.stdout.write(`${JSON.stringify(shown)}\n`);
      else
        process.stdout.write(
          `${formatTable(Object.entries(PROFILE_FIELD_HELP).map(([field, info]) => [field, String(shown[field as keyof typeof shown]), info.help]))}\nextraFlags  ${shown.extraFlags.join(' ') || '(none)'}\n`,
        );
    } else if (action === 'save') {
      const saved = { ...(await container.servers.profileWith(values.from ?? 'default', values.set ?? [])), name: name! };
      await servers.saveProfile(saved);
      process.stderr.write(`saved server profile ${name}\n`);
    } else if (!(await servers.deleteProfile(name!))) {
      throw new AppError(ErrorCode.NotFound, `No saved server profile named "${name}"`);
    }
    return 0;
  } finally {
    await container.dispose();
  }
};

/** A log larger than this is not a startup log; its start is what matters, so only that much is read. */
const EXPLAIN_MAX_BYTES = 4 * 2 ** 20;

async function readLog(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    let total = 0;
    for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      total += chunk.length;
      if (total >= EXPLAIN_MAX_BYTES) break;
    }
    return Buffer.concat(chunks).subarray(0, EXPLAIN_MAX_BYTES).toString('utf8');
  }
  const handle = await fs.promises.open(file, 'r');
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new AppError(ErrorCode.Usage, `${file}: not a regular file; give a log file, or - for standard input`);
    const buffer = Buffer.alloc(Math.min(EXPLAIN_MAX_BYTES, stat.size));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

const explain: CommandHandler = async (args) => {
  const { values, positionals } = parseOptions(args, { json: { type: 'boolean' }, db: { type: 'string' } }, EXPLAIN_USAGE, true);
  if (positionals.length !== 1)
    throw new AppError(ErrorCode.Usage, `Give one log file, or - for standard input\n\nUsage: ${EXPLAIN_USAGE}`);
  const file = positionals[0]!;
  let text: string;
  try {
    text = await readLog(file);
  } catch (error) {
    if (error instanceof AppError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new AppError(
      ErrorCode.Usage,
      `${file}: cannot read it (${code ?? (error as Error).message}); give a llama-server log file, or - for standard input`,
    );
  }
  const container = await openCliServices(values.db, shellAccess());
  let explanation;
  try {
    explanation = await container.services.servers.explainLog(text);
  } finally {
    await container.dispose();
  }
  const source = file === '-' ? 'standard input' : file;
  // Any part of a log is read; only a text without one line llama.cpp prints is refused.
  const refusal = explainRefusal(explanation, source);
  if (refusal) throw new AppError(ErrorCode.Usage, refusal);
  if (values.json) process.stdout.write(`${JSON.stringify(explanation, null, 2)}\n`);
  else process.stdout.write(logExplanationText(explanation, source));
  return 0;
};

export const serverCommand: CommandHandler = async (args, signal) => {
  const [action, ...rest] = args;
  if (action === 'start') return start(rest, signal);
  if (action === 'profile') return profile(rest, signal);
  if (action === 'explain') return explain(rest, signal);
  throw new AppError(
    ErrorCode.Usage,
    `Unknown server action "${action ?? ''}"\n\nUsage: ${START_USAGE}\n       ${PROFILE_USAGE}\n       ${EXPLAIN_USAGE}`,
  );
};
