import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/main/core/paths';

/**
 * The built-in chat-short workload with its answers capped at `maxTokens`, written into `dir`
 * under a name of its own: the same prompts, so every window a test measures stays short.
 */
export function chatShortWithAnswersOf(dir: string, maxTokens: number): string {
  const chatShort = fs.readFileSync(path.join(projectRoot(), 'resources', 'workloads', 'chat-short.yaml'), 'utf8');
  // A changed default would leave the cap unapplied and the test slow, not wrong: say so at once.
  if (!chatShort.includes('max_tokens: 48')) throw new Error('chat-short.yaml no longer sets max_tokens: 48; update this helper');
  const file = path.join(dir, `chat-short-${maxTokens}.yaml`);
  fs.writeFileSync(
    file,
    chatShort.replace('name: chat-short', `name: chat-short-${maxTokens}`).replace('max_tokens: 48', `max_tokens: ${maxTokens}`),
  );
  return file;
}
