import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import type { ExperimentKind, ExperimentProtocols } from '../../src/shared/contract/experiments';

/**
 * A constructed protocol record with only the fields every kind shares, for tests of what is done
 * with a result (stored, charted, settled) that never read the kind's own protocol fields.
 */
export function sharedProtocolFields<K extends ExperimentKind>(kind: K): ExperimentProtocols[K] {
  return { kind, cooldown: null, workload: 'chat-short', profile: defaultProfile() } as unknown as ExperimentProtocols[K];
}
