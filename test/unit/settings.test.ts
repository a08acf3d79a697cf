import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readUserConfig } from '../../src/main/core/config';
import { rootedPaths } from '../../src/main/core/path-policy';
import type { ServiceAccess } from '../../src/main/services/access';
import { createSettingsService } from '../../src/main/services/settings-service';
import { openDatabase } from '../../src/main/store/database';
import { ProfileStore } from '../../src/main/store/profile-store';
import { SAVED_PROFILE_RULES } from '../../src/main/engines/llamacpp/profile-rules';
import { defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

function settingsIn(dataDir: string) {
  const env = { INFERLAB_DATA_DIR: dataDir };
  const profiles = new ProfileStore(openDatabase(path.join(dataDir, 'settings.db')), SAVED_PROFILE_RULES);
  const access = {
    face: 'rpc',
    paths: rootedPaths({ model: ['/models'], workload: [], text: [], results: [] }),
    endpointHeaders: () => ({}),
    checkEndpoint: () => undefined,
  } as ServiceAccess;
  const service = createSettingsService({
    access,
    dbPath: path.join(dataDir, 'settings.db'),
    engine: async () => {
      throw new Error('No llama-server: run inferlab setup');
    },
    profiles,
    env,
  });
  return { service, profiles, env, configFile: path.join(dataDir, 'config.json') };
}

describe('settings', () => {
  it('saves what the UI may change into the config file, keeping every other field', async () => {
    const dataDir = tempDir();
    const { service, profiles, env, configFile } = settingsIn(dataDir);
    const endpointKeys = [{ endpoint: 'http://127.0.0.1:8000', env: 'MY_KEY' }];
    fs.writeFileSync(configFile, JSON.stringify({ roots: { models: ['/data/models'] }, endpointKeys }));
    profiles.save({ ...defaultProfile('small'), contextSize: 1024 });

    const saved = await service.update({ decisionName: '  Ada  ', defaultProfile: 'small', telemetryIntervalMs: 500 });
    expect(saved).toMatchObject({ decisionName: 'Ada', defaultProfile: 'small', telemetryIntervalMs: 500, configFile, dataDir });
    expect(readUserConfig(env)).toEqual({
      roots: { models: ['/data/models'] },
      endpointKeys,
      ui: { decisionName: 'Ada', defaultProfile: 'small' },
      telemetry: { intervalMs: 500 },
    });
    // One change leaves the others as they were.
    expect((await service.update({ telemetryIntervalMs: 1000 })).decisionName).toBe('Ada');
    expect(fs.statSync(configFile).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dataDir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('shows where things are, and the engine problem when there is no engine', async () => {
    const { service } = settingsIn(tempDir());
    const info = await service.get();
    expect(info.modelFolders).toEqual(['/models']);
    expect(info.engine).toBeNull();
    expect(info.engineProblem).toMatch(/run inferlab setup/);
    expect(info).toMatchObject({ decisionName: '', defaultProfile: 'default', telemetryIntervalMs: 250 });
  });

  it('refuses a profile that does not exist, and a config file with a bad interval, naming the field', async () => {
    const dataDir = tempDir();
    const { service, env, configFile } = settingsIn(dataDir);
    await expect(service.update({ defaultProfile: 'nope' })).rejects.toThrow(/No server profile named "nope"/);
    expect(fs.existsSync(configFile)).toBe(false);
    fs.writeFileSync(configFile, JSON.stringify({ telemetry: { intervalMs: 5 } }));
    expect(() => readUserConfig(env)).toThrow(/telemetry\.intervalMs" must be a whole number of ms from 100 to 10000, got 5/);
  });
});
