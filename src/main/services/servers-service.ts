import { explainLlamaLog } from '../engines/llamacpp/log-explain';
import type { ServersService, ServerStartOptions } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { defaultProfile } from '../engines/llamacpp/launch-args';
import { isDemoRef } from '../models/demo-models';
import { describeModel } from '../models/model-library';
import type { ServerManager } from '../server/server-manager';
import type { ManagedServer } from '../server/managed-server';
import { applySettings, validateProfile } from '../engines/llamacpp/profile-rules';
import type { ProfileStore } from '../store/profile-store';
import type { ServerProfile, ServerSnapshot } from '../../shared/contract/server';
import { profileWithin, resolveModelWithin, type ServiceAccess } from './access';

/** A server started in process and awaited: what the person at the shell gets. */
export interface LaunchedServer {
  /** Ready, or failed with its fault; null when `signal` stopped the start first. */
  snapshot: ServerSnapshot | null;
  /** The header that authorizes requests to it: for the person who started it, never sent over RPC. */
  authorization: string | null;
  /** Resolves when the server crashes after it was ready. */
  crashed: Promise<ServerSnapshot>;
  stop(): Promise<ServerSnapshot>;
}

/** The servers service plus the awaitable start in-process callers get. */
export interface LocalServersService extends ServersService {
  /** A saved profile with FIELD=VALUE settings applied over it (llama-server's own flag names work too). */
  profileWith(profileName: string, settings: readonly string[]): Promise<ServerProfile>;
  launch(
    modelRef: string,
    profile: ServerProfile,
    options: ServerStartOptions,
    hooks: { signal?: AbortSignal; onState?: (snapshot: ServerSnapshot, authorization: string | null) => void },
  ): Promise<LaunchedServer>;
}

export function createServersService(servers: ServerManager, profiles: ProfileStore, access: ServiceAccess): LocalServersService {
  async function prepare(modelRef: string, profile: ServerProfile, options: ServerStartOptions): Promise<ManagedServer> {
    const engine = options.engine ?? 'llama.cpp';
    // Only llama-server's extra flags pass an allow-list; the Python servers' are not checked yet.
    if (engine !== 'llama.cpp' && access.face === 'rpc')
      throw new AppError(ErrorCode.Forbidden, `${engine} servers are started from the CLI only: their flags are not checked over RPC`);
    return servers.prepare({
      modelRef: engine !== 'llama.cpp' || isDemoRef(modelRef) ? modelRef : await resolveModelWithin(access, modelRef),
      profile: await profileWithin(access, profile),
      engine,
      force: options.force ?? false,
    });
  }

  return {
    profileWith: async (profileName, settings) => applySettings(profiles.get(profileName), settings),
    list: async () => servers.list(),
    profiles: async () => profiles.list(),
    defaultProfile: async () => defaultProfile(),
    async validateProfile(profile, modelRef) {
      let trainedContext: number | null = null;
      if (modelRef) {
        try {
          trainedContext = (await describeModel(await resolveModelWithin(access, modelRef))).contextLength;
        } catch {
          // The model is checked again at start; here only the profile is judged.
        }
      }
      return validateProfile(profile, { trainedContext });
    },
    saveProfile: async (profile) => profiles.save(profile),
    deleteProfile: async (name) => profiles.delete(name),
    async start(modelRef, profile, options) {
      const server = await prepare(modelRef, profile, options ?? {});
      // Resolve once starting is under way: readiness arrives as server.state events.
      // A failure to launch shows as the server's state; a throw here must not end the process.
      server.start().catch((error: Error) => process.stderr.write(`server ${server.id} did not start: ${error.message}\n`));
      return server.snapshot;
    },
    async launch(modelRef, profile, options, hooks) {
      const server = await prepare(modelRef, profile, options);
      const authorization = server.authHeaders.authorization ?? null;
      const onState = hooks.onState;
      if (onState) server.changes.on((snapshot) => onState(snapshot, authorization));
      const crashed = new Promise<ServerSnapshot>((resolve) =>
        server.changes.on((snapshot) => (snapshot.state === 'crashed' ? resolve(snapshot) : undefined)),
      );
      const signal = hooks.signal;
      const stopRequested = new Promise<null>((resolve) =>
        signal?.aborted ? resolve(null) : signal?.addEventListener('abort', () => resolve(null), { once: true }),
      );
      const snapshot = await Promise.race([server.start(), stopRequested]);
      return { snapshot, authorization, crashed, stop: () => server.stop() };
    },
    stop: async (serverId) => servers.stop(serverId),
    logs: async (serverId) => servers.get(serverId).logTail(200),
    explainLog: async (text) => explainLlamaLog(text),
  };
}
