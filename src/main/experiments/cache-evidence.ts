import type { CacheEvidence } from '../../shared/contract/experiments';
import { parsedTimings, type RequestRow } from '../store/run-rows';
import type { TokenCounter } from '../workload/token-counter';
import type { ChatMessage } from '../workload/workload-types';

/** Share of its shared prefix a warm request must have reused: tokenization at the prefix's edge may differ by a token or two. */
export const PREFIX_HIT_SHARE = 0.95;
/** Shorter shared prefixes cannot be told apart from the chat template's own leading tokens, which every request reuses. */
export const MIN_PREFIX_TOKENS = 16;

export type RequestVerdict = 'confirmed' | 'contradicted' | 'unknown';

export type CacheExpectation =
  | { kind: 'none' }
  /** item id → tokens of its shared prefix; null: the item has no shared prefix long enough to prove anything. */
  | { kind: 'prefix'; prefixTokens: ReadonlyMap<string, number | null>; share?: number };

type EvidenceRow = Pick<RequestRow, 'cached_tokens' | 'timings_json' | 'item_id' | 'warmup' | 'error_class'>;

/**
 * Prompt tokens the server says it took from its cache: `usage.prompt_tokens_details.cached_tokens`
 * and `timings.cache_n` (the larger if they disagree, so a contradiction of "nothing reused" is never
 * hidden); null when the server reported neither.
 */
export function reusedTokens(row: Pick<RequestRow, 'cached_tokens' | 'timings_json'>): number | null {
  const known: number[] = [];
  if (typeof row.cached_tokens === 'number') known.push(row.cached_tokens);
  const cacheN = parsedTimings(row)?.cache_n;
  if (typeof cacheN === 'number') known.push(cacheN);
  return known.length === 0 ? null : Math.max(...known);
}

export function classifyRequest(row: EvidenceRow, expectation: CacheExpectation): RequestVerdict {
  const reused = reusedTokens(row);
  if (reused === null) return 'unknown';
  if (expectation.kind === 'none') return reused === 0 ? 'confirmed' : 'contradicted';
  const prefix = row.item_id === null ? null : (expectation.prefixTokens.get(row.item_id) ?? null);
  if (prefix === null) return 'unknown';
  return reused >= Math.ceil((expectation.share ?? PREFIX_HIT_SHARE) * prefix) ? 'confirmed' : 'contradicted';
}

export function ruleText(expectation: CacheExpectation): string {
  if (expectation.kind === 'none')
    return 'a request confirms "no reuse" when the server reports 0 cached prompt tokens (usage.prompt_tokens_details.cached_tokens and timings.cache_n); any reused token contradicts it; no count at all is unknown';
  const share = Math.round((expectation.share ?? PREFIX_HIT_SHARE) * 100);
  return `a request confirms "prefix reuse" when the server reports cached prompt tokens ≥ ${share} % of its item's shared prefix (the longest text it shares with another item of the workload, cut at a word boundary, counted by the server's tokenizer); fewer contradicts it; no count, or a shared prefix under ${MIN_PREFIX_TOKENS} tokens (indistinguishable from the chat template), is unknown`;
}

/** Per-request evidence over a condition's measured, successful requests, with counts that read as a sentence. */
export function cacheEvidence(rows: readonly EvidenceRow[], expectation: CacheExpectation): CacheEvidence {
  const measured = rows.filter((row) => row.warmup === 0 && row.error_class === null);
  const counts = { confirmed: 0, contradicted: 0, unknown: 0 };
  let maxContradicting = 0;
  for (const row of measured) {
    const verdict = classifyRequest(row, expectation);
    counts[verdict] += 1;
    if (verdict === 'contradicted') maxContradicting = Math.max(maxContradicting, reusedTokens(row) ?? 0);
  }
  const n = measured.length;
  const share = Math.round((expectation.kind === 'prefix' ? (expectation.share ?? PREFIX_HIT_SHARE) : 0) * 100);
  const parts =
    expectation.kind === 'none'
      ? [
          `${counts.confirmed} of ${n} requests reused no cached prompt tokens`,
          counts.contradicted > 0 ? `${counts.contradicted} reused some (up to ${maxContradicting} tokens)` : null,
        ]
      : [
          `${counts.confirmed} of ${n} requests reused ≥ ${share} % of their shared prefix`,
          counts.contradicted > 0 ? `${counts.contradicted} reused less` : null,
        ];
  if (counts.unknown > 0)
    parts.push(
      `${counts.unknown} unknown (${expectation.kind === 'none' ? 'no cache count from the server' : 'no cache count, or no shared prefix to prove'})`,
    );
  return {
    expect: expectation.kind === 'none' ? 'no reuse' : 'prefix reuse',
    rule: ruleText(expectation),
    measured: n,
    ...counts,
    summary: parts.filter(Boolean).join('; '),
  };
}

/** The text whose leading part a prompt cache can reuse: the messages' contents in order, or the raw prompt. */
export function promptText(item: { messages: ChatMessage[] | null; prompt: string | null }): string {
  return item.messages ? item.messages.map((message) => message.content).join('\n') : (item.prompt ?? '');
}

function commonPrefixLength(a: string, b: string): number {
  const limit = Math.min(a.length, b.length);
  let i = 0;
  while (i < limit && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/**
 * Each item's shared prefix: the longest leading text it shares with any other item, cut back to
 * the last whitespace so that a word split in two (and tokenized differently) is not counted. In
 * sorted order the longest common prefix is always with a neighbour, so this is n log n.
 */
export function sharedPrefixes(items: readonly { id: string; text: string }[]): Map<string, string> {
  const sorted = [...items].sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  const prefixes = new Map<string, string>();
  sorted.forEach((item, index) => {
    const before = index > 0 ? commonPrefixLength(item.text, sorted[index - 1]!.text) : 0;
    const after = index < sorted.length - 1 ? commonPrefixLength(item.text, sorted[index + 1]!.text) : 0;
    const length = Math.max(before, after);
    const whole = length === item.text.length;
    const text = item.text.slice(0, length);
    const cut = whole ? length : Math.max(text.lastIndexOf(' '), text.lastIndexOf('\n'), text.lastIndexOf('\t'));
    prefixes.set(item.id, cut > 0 ? text.slice(0, cut) : '');
  });
  return prefixes;
}

/** Tokens of each item's shared prefix by the serving engine's tokenizer; null below MIN_PREFIX_TOKENS. */
export async function sharedPrefixTokens(
  items: readonly { id: string; text: string }[],
  counter: TokenCounter,
): Promise<Map<string, number | null>> {
  const byText = new Map<string, number>();
  const result = new Map<string, number | null>();
  for (const [id, prefix] of sharedPrefixes(items)) {
    if (prefix.length === 0) {
      result.set(id, null);
      continue;
    }
    let tokens = byText.get(prefix);
    if (tokens === undefined) {
      tokens = await counter.count(prefix);
      byText.set(prefix, tokens);
    }
    result.set(id, tokens >= MIN_PREFIX_TOKENS ? tokens : null);
  }
  return result;
}
