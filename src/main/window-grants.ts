/**
 * The desktop app's one message to its local service: "the person chose this model file in the
 * app's own file dialog". It travels over the service's stdin, which only the app holds, one JSON
 * line each way, so no page (nor anything else that reaches the service's port) can grant a file.
 */
import readline from 'node:readline';
import type { Readable } from 'node:stream';
import type { PathPolicy } from './core/path-policy';

export interface GrantRequest {
  id: number;
  grant: 'model';
  path: string;
}

export type GrantReply = { id: number; granted: true } | { id: number; granted: false; reason: string };

export const encodeGrantRequest = (request: GrantRequest): string => `${JSON.stringify(request)}\n`;

/** The service's side: applies each grant to the RPC face's paths and answers it; resolves when the app's end closes. */
export function answerGrants(input: Readable, paths: PathPolicy, reply: (line: string) => void): Promise<void> {
  const lines = readline.createInterface({ input });
  lines.on('line', async (line) => {
    let request: Partial<GrantRequest>;
    try {
      request = JSON.parse(line) as Partial<GrantRequest>;
    } catch {
      return;
    }
    if (typeof request.id !== 'number') return;
    try {
      if (request.grant !== 'model' || typeof request.path !== 'string') throw new Error('only a model file can be granted');
      await paths.grant(request.path, 'model');
      reply(`${JSON.stringify({ id: request.id, granted: true } satisfies GrantReply)}\n`);
    } catch (error) {
      reply(`${JSON.stringify({ id: request.id, granted: false, reason: (error as Error).message } satisfies GrantReply)}\n`);
    }
  });
  return new Promise((resolve) => lines.once('close', resolve));
}

/** Whether a reply line from the service answers a grant (the service prints nothing else after its address). */
export function parseGrantReply(line: string): GrantReply | null {
  try {
    const reply = JSON.parse(line) as GrantReply;
    return typeof reply?.id === 'number' && typeof reply.granted === 'boolean' ? reply : null;
  } catch {
    return null;
  }
}
