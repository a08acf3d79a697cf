import type { StartRunSpec } from '../../src/shared/contract';

/** A small valid run on the demo model: chat-short, closed loop of one, four requests. Override what a case needs. */
export function demoRunSpec(overrides: Partial<StartRunSpec> = {}): StartRunSpec {
  return {
    workload: 'chat-short',
    model: 'demo:q8_0',
    endpoint: null,
    profileName: 'default',
    concurrency: 1,
    rate: null,
    requests: 4,
    durationS: null,
    warmup: 0,
    private: false,
    ...overrides,
  };
}
