import { describe, expect, it } from 'vitest';
import { closestName, didYouMean, editDistance } from '../../src/main/core/closest-name';
import { experimentSpecFromArgs } from '../../src/main/cli/commands/experiment';
import { parseOptions } from '../../src/main/cli/args';
import { resolveModelRef } from '../../src/main/models/demo-models';
import { workloadPath } from '../../src/main/workload/workload-files';

const WORKLOADS = ['chat-short', 'decode-heavy', 'embeddings', 'prefix-share', 'prefill-heavy', 'rerank', 'tool-calls', 'vision'];

describe('the name a typo meant', () => {
  it('counts inserts, deletes, replacements and swapped neighbours as one edit each', () => {
    expect(editDistance('chat-shrt', 'chat-short')).toBe(1);
    expect(editDistance('concurency', 'concurrency')).toBe(1);
    expect(editDistance('warmcodl', 'warmcold')).toBe(1);
    expect(editDistance('kvcahce', 'kvcache')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', 'abc')).toBe(0);
  });

  it('offers one name only when it is near and no other is as near; never for an exact name or a long stranger', () => {
    expect(closestName('chat-shrt', WORKLOADS)).toBe('chat-short');
    expect(closestName('CHAT-SHORT', WORKLOADS)).toBeNull();
    expect(closestName('Chat-Shrt', WORKLOADS)).toBe('chat-short');
    // A quarter of the length at most: a short word gets one edit, a word from elsewhere none.
    expect(closestName('rerang', WORKLOADS)).toBe('rerank');
    expect(closestName('hello', WORKLOADS)).toBeNull();
    expect(closestName('my-own-workload.yaml', WORKLOADS)).toBeNull();
    // Two names as near as each other: no guess.
    expect(closestName('pre-heavy', ['prefill-heavy', 'prefix-heavy'])).toBeNull();
    expect(closestName('x'.repeat(100_000), WORKLOADS)).toBeNull();
    expect(didYouMean('visoin', WORKLOADS)).toBe('; did you mean vision?');
    expect(didYouMean('nothing-like-it', WORKLOADS)).toBe('');
  });

  it('is offered where a name is mistyped: a flag, a workload, a demo model, an experiment kind', async () => {
    expect(() => parseOptions(['--concurency', '4'], { concurrency: { type: 'string' }, model: { type: 'string' } }, 'USAGE')).toThrow(
      /^Unknown option '--concurency'; did you mean --concurrency\?\n\nUsage: USAGE$/,
    );
    // Nothing near: Node's own words.
    expect(() => parseOptions(['--bogus'], { concurrency: { type: 'string' } }, 'USAGE')).toThrow(/^Unknown option '--bogus'/);
    await expect(workloadPath('chat-shrt')).rejects.toThrow(/named "chat-shrt"; did you mean chat-short\? Built-in: /);
    await expect(resolveModelRef('demo:q8_o')).rejects.toThrow(/Unknown demo model "demo:q8_o"; did you mean demo:q8_0\?; expected one of/);
    // Another quantization than the demo's three is not a typo of one of them.
    await expect(resolveModelRef('demo:q2_k')).rejects.toThrow(/Unknown demo model "demo:q2_k"; expected one of/);
    expect(() => experimentSpecFromArgs(['warmcodl', '--model', 'demo:q8_0'])).toThrow(
      /Unknown experiment "warmcodl"; did you mean warmcold\?/,
    );
  });
});
