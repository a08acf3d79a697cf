import { useEffect, useState } from 'react';
import type { AppServices, ServerProfile, WorkloadInfo } from '../../../shared/contract';
import { useAction } from './use-action';

/**
 * The workloads and saved profiles a run or experiment form offers, read once per connection,
 * and the error of a read that failed: without it the form would offer empty lists and not say why.
 */
export function useRunChoices(client: AppServices): { workloads: WorkloadInfo[]; profiles: ServerProfile[]; error: Error | null } {
  const [workloads, setWorkloads] = useState<WorkloadInfo[]>([]);
  const [profiles, setProfiles] = useState<ServerProfile[]>([]);
  // One action for both reads: each clears the error as it starts, and both start together.
  const { error, run } = useAction();
  useEffect(() => {
    void run(() => client.workloads.list(), setWorkloads);
    void run(() => client.servers.profiles(), setProfiles);
  }, [client, run]);
  return { workloads, profiles, error };
}
