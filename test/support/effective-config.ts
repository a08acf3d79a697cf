import type { EffectiveConfig } from '../../src/shared/contract/server';

/** What a server's log told of a 4096-token context on one slot, nothing else known; override what a case needs. */
export function effectiveConfig(overrides: Partial<EffectiveConfig> = {}): EffectiveConfig {
  return {
    version: null,
    build: null,
    model: null,
    modelFileType: null,
    contextSize: 4096,
    contextPerSlot: 4096,
    slots: 1,
    trainedContext: null,
    layersOffloaded: null,
    buffersMib: {},
    argv: [],
    ...overrides,
  };
}
