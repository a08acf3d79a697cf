import { describe, expect, it } from 'vitest';
import { ResponsivenessWatch } from '../../src/main/runner/responsiveness-watch';

describe('noticing a server that stopped answering', () => {
  it('gives up after as many timeouts in a row as slots (at least 3), and a success resets the count', () => {
    const watch = new ResponsivenessWatch(4);
    expect(['first_token_timeout', 'total_timeout', 'first_token_timeout'].map((c) => watch.record(c as never))).toEqual([
      null,
      null,
      null,
    ]);
    expect(watch.record(null)).toBeNull();
    for (let i = 0; i < 3; i += 1) expect(watch.record('total_timeout')).toBeNull();
    expect(watch.record('total_timeout')).toBe('the server stopped responding: 4 requests in a row failed (total_timeout)');
    const single = new ResponsivenessWatch(1);
    expect([single.record('total_timeout'), single.record('total_timeout'), single.record('total_timeout')]).toEqual([
      null,
      null,
      'the server stopped responding: 3 requests in a row failed (total_timeout)',
    ]);
  });

  it('counts refused connections apart: twice the slots, at least 10; other failures reset both', () => {
    const watch = new ResponsivenessWatch(2);
    for (let i = 0; i < 9; i += 1) expect(watch.record('connect')).toBeNull();
    expect(watch.record('http_status')).toBeNull();
    for (let i = 0; i < 9; i += 1) expect(watch.record('connect')).toBeNull();
    expect(watch.record('connect')).toBe('the server stopped responding: 10 requests in a row failed (connect)');
  });
});
