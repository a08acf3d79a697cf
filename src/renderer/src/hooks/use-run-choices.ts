import { useEffect, useState } from 'react';
import type { AppServices, ServerProfile, WorkloadInfo } from '../../../shared/contract';

/** The workloads and saved profiles a run or experiment form offers, read once per connection. */
export function useRunChoices(client: AppServices): { workloads: WorkloadInfo[]; profiles: ServerProfile[] } {
  const [workloads, setWorkloads] = useState<WorkloadInfo[]>([]);
  const [profiles, setProfiles] = useState<ServerProfile[]>([]);
  useEffect(() => {
    void client.workloads.list().then(setWorkloads, () => undefined);
    void client.servers.profiles().then(setProfiles, () => undefined);
  }, [client]);
  return { workloads, profiles };
}
