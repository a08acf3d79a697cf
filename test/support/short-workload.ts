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

/**
 * The built-in long-context design (a fact 90 % of the way through a document) with 500-token
 * documents, written as `dir/short-documents.yaml`: every answer is still judged in its needle
 * group, and two windows stay quick on a CPU.
 */
export function shortDocumentsWorkload(dir: string): string {
  const file = path.join(dir, 'short-documents.yaml');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    file,
    [
      'name: short-documents',
      'defaults: { temperature: 0, seed: 13 }',
      'groups:',
      '  - name: needle',
      '    generate:',
      '      long_document: { count: 2, document_tokens: 500, fact_position: 0.9, output_tokens: 8, seed: 5 }',
      '',
    ].join('\n'),
  );
  return file;
}
