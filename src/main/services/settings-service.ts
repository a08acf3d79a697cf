import path from 'node:path';
import type { SettingsChanges, SettingsInfo, SettingsService } from '../../shared/contract';
import type { EngineInfo } from '../../shared/contract/engine';
import { readUserConfig, TELEMETRY_INTERVAL_RANGE_MS, updateUserConfig, userConfigPath } from '../core/config';
import { userDataDir } from '../core/paths';
import type { ProfileStore } from '../store/profile-store';
import type { ServiceAccess } from './access';

/**
 * The Settings view's service: shows where everything is and saves the few settings the UI may
 * change. Folders and engine commands are not among them: what the UI may read, and what it may
 * run, change only in the config file, by the person who owns it.
 */
export function createSettingsService(options: {
  access: ServiceAccess;
  dbPath: string;
  engine: () => Promise<EngineInfo>;
  profiles: ProfileStore;
  env?: NodeJS.ProcessEnv;
}): SettingsService {
  const env = options.env ?? process.env;
  const info = async (): Promise<SettingsInfo> => {
    const config = readUserConfig(env);
    let engine: SettingsInfo['engine'] = null;
    let engineProblem: string | null = null;
    try {
      const found = await options.engine();
      engine = { serverPath: found.serverPath, backend: found.backend, version: found.version, origin: found.origin, build: found.build };
    } catch (error) {
      engineProblem = (error as Error).message;
    }
    return {
      dataDir: userDataDir(env),
      configFile: userConfigPath(env),
      databasePath: path.resolve(options.dbPath),
      modelFolders: [...options.access.paths.roots('model')],
      workloadFolders: [...options.access.paths.roots('workload')],
      engine,
      engineProblem,
      decisionName: config.ui?.decisionName ?? '',
      defaultProfile: config.ui?.defaultProfile ?? 'default',
      telemetryIntervalMs: config.telemetry?.intervalMs ?? TELEMETRY_INTERVAL_RANGE_MS.default,
      telemetryIntervalRangeMs: { min: TELEMETRY_INTERVAL_RANGE_MS.min, max: TELEMETRY_INTERVAL_RANGE_MS.max },
    };
  };
  return {
    get: info,
    async update(changes: SettingsChanges) {
      // A profile that does not exist is refused by name before anything is written.
      if (changes.defaultProfile !== undefined) options.profiles.get(changes.defaultProfile);
      updateUserConfig(
        (config) => ({
          ...config,
          ui: {
            ...config.ui,
            ...(changes.decisionName !== undefined ? { decisionName: changes.decisionName.trim() } : {}),
            ...(changes.defaultProfile !== undefined ? { defaultProfile: changes.defaultProfile } : {}),
          },
          telemetry: {
            ...config.telemetry,
            ...(changes.telemetryIntervalMs !== undefined ? { intervalMs: changes.telemetryIntervalMs } : {}),
          },
        }),
        env,
      );
      return info();
    },
  };
}
