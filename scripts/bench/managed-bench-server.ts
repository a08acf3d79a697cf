/** A llama-server as a bench step starts one: managed, in a folder and database of its own. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EngineInfo } from '../../src/shared/contract/engine';
import type { ServerPurpose } from '../../src/shared/contract/server';
import type { ServerProfile } from '../../src/shared/contract/specs';
import { findFreePort } from '../../src/main/core/ports';
import { SAVED_PROFILE_RULES } from '../../src/main/engines/llamacpp/profile-rules';
import { DEFAULT_TIMEOUTS } from '../../src/main/server/managed-server';
import { ServerManager } from '../../src/main/server/server-manager';
import { openAppStore } from '../../src/main/store/app-store';

export interface ManagedBenchServer {
  baseUrl: string;
  /** The managed server answers only requests carrying its key. */
  headers: Record<string, string>;
  pid: number | null;
  /** Stops the server and removes its folder and database. */
  dispose(): Promise<void>;
}

export async function startManagedBenchServer(
  engine: EngineInfo,
  modelRef: string,
  profile: ServerProfile,
  serves: ServerPurpose = 'generation',
): Promise<ManagedBenchServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inferlab-bench-'));
  const store = openAppStore(path.join(dir, 'bench.db'), SAVED_PROFILE_RULES);
  const servers = new ServerManager(async () => engine, store.sessions, dir, {
    timeouts: DEFAULT_TIMEOUTS,
    choosePort: () => findFreePort(),
  });
  const dispose = async () => {
    await servers.dispose();
    store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const server = await servers.start({ modelRef, profile, serves });
    return { baseUrl: server.baseUrl!, headers: { ...servers.get(server.id).authHeaders }, pid: server.pid, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}
