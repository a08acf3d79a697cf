import { describe, expect, it } from 'vitest';
import { onAbort } from '../../src/main/client/abort-fanout';

describe('abort callbacks behind one listener per signal', () => {
  it('calls every registered callback once, and none that was unregistered', () => {
    const controller = new AbortController();
    const calls: number[] = [];
    const stops = Array.from({ length: 5000 }, (_, i) => onAbort(controller.signal, () => calls.push(i)));
    for (let i = 0; i < 5000; i += 2) stops[i]!();
    controller.abort();
    controller.abort();
    expect(calls).toHaveLength(2500);
    expect(calls.every((i) => i % 2 === 1)).toBe(true);
    expect(new Set(calls).size).toBe(2500);
  });

  it('keeps signals apart, and a callback that unregisters another during the abort does not break the rest', () => {
    const first = new AbortController();
    const second = new AbortController();
    const calls: string[] = [];
    let stopLater = () => {};
    onAbort(first.signal, () => {
      calls.push('a');
      stopLater();
    });
    stopLater = onAbort(first.signal, () => calls.push('b'));
    onAbort(second.signal, () => calls.push('other'));
    first.abort();
    // Every callback registered when the abort came is called: the set is copied before the calls.
    expect(calls).toEqual(['a', 'b']);
    second.abort();
    expect(calls).toEqual(['a', 'b', 'other']);
  });

  it('adds one event listener to the signal however many callbacks wait on it', () => {
    const controller = new AbortController();
    let added = 0;
    const original = controller.signal.addEventListener.bind(controller.signal);
    controller.signal.addEventListener = ((...args: Parameters<typeof original>) => {
      added += 1;
      return original(...args);
    }) as typeof original;
    for (let i = 0; i < 100; i += 1) onAbort(controller.signal, () => {});
    expect(added).toBe(1);
  });
});
