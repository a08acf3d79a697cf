import { describe, expect, it } from 'vitest';
import { when } from '../../src/renderer/src/components/format';

describe('times in the UI', () => {
  it('shows a stored UTC time in the given zone, with the zone named', () => {
    expect(when('2026-11-30T16:05:09.123Z', 'UTC')).toBe('2026-11-30 16:05:09 UTC');
    expect(when('2026-11-30T16:05:09.123Z', 'Europe/Berlin')).toBe('2026-11-30 17:05:09 GMT+1');
    expect(when('2026-07-01T23:30:00Z', 'America/New_York')).toBe('2026-07-01 19:30:00 EDT');
    // Each zone keeps its own formatter: going back to one already used gives its time again, not the last zone's.
    expect(when('2026-11-30T16:05:09.123Z', 'UTC')).toBe('2026-11-30 16:05:09 UTC');
    expect(when('2026-11-30T16:05:09.123Z', 'Asia/Kolkata')).toBe('2026-11-30 21:35:09 GMT+5:30');
    expect(when('2026-11-30T16:05:09.123Z', 'Europe/Berlin')).toBe('2026-11-30 17:05:09 GMT+1');
  });

  it('leaves text that is not a time as it is', () => {
    expect(when('not a time')).toBe('not a time');
  });
});
