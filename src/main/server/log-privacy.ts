import crypto from 'node:crypto';
import { ErrorCode } from '../../shared/errors';
import type { Emitter } from '../core/emitter';
import { AppError } from '../core/errors';
import type { ServerAddress } from '../core/server-address';

export interface LogPrivacyProbe {
  /** What the server wrote into its log that a private run must keep out of every file; null when nothing. */
  leaked: 'the request text' | 'the streamed reply' | null;
}

/**
 * Asks the server once, with a random marker as the prompt, and watches its log while it
 * answers. A build whose log level includes request bodies (`request: {...}`) writes the
 * marker; one that logs streamed chunks writes the reply's completion id. Either way a
 * private run's prompts and outputs would land in the server's log file.
 */
export async function probeLogPrivacy(server: ServerAddress, logLines: Emitter<string>, settleMs = 300): Promise<LogPrivacyProbe> {
  const marker = `inferlab-log-canary-${crypto.randomBytes(8).toString('hex')}`;
  const seen: string[] = [];
  const unsubscribe = logLines.on((line) => seen.push(line));
  let completionId: string | null = null;
  try {
    const response = await fetch(`${server.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...server.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: marker }], max_tokens: 4, temperature: 0, stream: true }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = await response.text();
    if (!response.ok)
      throw new AppError(ErrorCode.RequestFailed, `the log-privacy check request answered HTTP ${response.status}: ${body.slice(0, 200)}`);
    completionId = /"id"\s*:\s*"([^"]{8,})"/.exec(body)?.[1] ?? null;
    // The log arrives through a pipe, a little after the reply.
    await new Promise((resolve) => setTimeout(resolve, settleMs));
  } finally {
    unsubscribe();
  }
  const leaked = seen.some((line) => line.includes(marker))
    ? 'the request text'
    : completionId !== null && seen.some((line) => line.includes(completionId))
      ? 'the streamed reply'
      : null;
  return { leaked };
}

/** The refusal for a private run on a server whose log keeps text. */
export function logPrivacyRefusal(serverPath: string, leaked: NonNullable<LogPrivacyProbe['leaked']>): AppError {
  return new AppError(
    ErrorCode.InvalidInput,
    `a private run keeps prompts and outputs out of every file, but this llama-server (${serverPath}) wrote ${leaked} into its log ` +
      'at the level Infer Lab starts it with; run privately on the managed build (inferlab setup, and no engine.path or INFERLAB_LLAMA_SERVER), or run without --private',
    { leaked },
  );
}
