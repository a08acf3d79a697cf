import type { EventSink, ServersService } from '../../shared/contract';
import { defaultProfile } from '../engines/llamacpp/launch-args';
import { isDemoRef } from '../models/demo-models';
import { describeModel } from '../models/model-library';
import type { ServerManager } from '../server/server-manager';
import { validateProfile } from '../engines/llamacpp/profile-rules';
import type { ProfileStore } from '../store/profile-store';
import { resolveModelWithin, type ServiceAccess } from './access';

export function createServersService(
  servers: ServerManager,
  profiles: ProfileStore,
  events: EventSink,
  access: ServiceAccess,
): ServersService & { dispose(): void } {
  const unsubscribe = servers.changes.on((snapshot) => events.emit('server.state', snapshot));
  return {
    list: async () => servers.list(),
    profiles: async () => profiles.list(),
    defaultProfile: async () => defaultProfile(),
    async validateProfile(profile, modelRef) {
      let trainedContext: number | null = null;
      if (modelRef) {
        try {
          trainedContext = describeModel(await resolveModelWithin(access, modelRef)).contextLength;
        } catch {
          // The model is checked again at start; here only the profile is judged.
        }
      }
      return validateProfile(profile, { trainedContext });
    },
    saveProfile: async (profile) => profiles.save(profile),
    deleteProfile: async (name) => profiles.delete(name),
    async start(modelRef, profile, force) {
      const server = await servers.prepare({
        modelRef: isDemoRef(modelRef) ? modelRef : await resolveModelWithin(access, modelRef),
        profile,
        force: force ?? false,
      });
      // Resolve once starting is under way: readiness arrives as server.state events.
      // A failure to launch shows as the server's state; a throw here must not end the process.
      server.start().catch((error: Error) => process.stderr.write(`server ${server.id} did not start: ${error.message}\n`));
      return server.snapshot;
    },
    stop: async (serverId) => servers.stop(serverId),
    logs: async (serverId) => servers.get(serverId).logTail(200),
    dispose: () => unsubscribe(),
  };
}
