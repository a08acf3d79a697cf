import type { EnvChanges } from '../core/child-env';
import type { LoadedLoraAdapter } from './llamacpp/launch-args';
import type { ServerAddress } from '../core/server-address';
import type { EffectiveConfig, EngineCapabilities, EngineId, ServerFaultCode, ServerProfile } from '../../shared/contract/server';

export interface LaunchInput {
  modelPath: string;
  port: number;
  profile: ServerProfile;
  /** The profile's draft model, resolved to its file; absent or null when it drafts with none. */
  draftModelPath?: string | null;
  /** The profile's LoRA adapters in order (ids 0, 1, …), each resolved to its file and checked against the model, at its scale. */
  loraAdapters?: readonly LoadedLoraAdapter[];
  /** The profile's image projector, resolved to its file and checked; absent or null for text only. */
  projectorPath?: string | null;
}

/**
 * What the server manager needs to know about an engine it launches itself: how to build
 * the argv (never a shell line), how to read its log, and how to read back what ran.
 */
export interface ManagedEngineAdapter {
  id: EngineId;
  capabilities: EngineCapabilities;
  /**
   * Program, arguments and the environment it changes (the chosen GPUs); the program comes from
   * configuration the user saved, never from a request. Throws when the profile asks for what
   * this engine cannot do.
   */
  launch(input: LaunchInput): { program: string; args: string[]; env: EnvChanges };
  /**
   * The environment variable through which the server takes an API key (never argv, which
   * every local user can read), or null for an engine that has none.
   */
  apiKeyEnv: string | null;
  /** Credentials from the user's environment this engine uses itself (every other one is withheld: core/child-env.ts). */
  keepsCredential?: (name: string) => boolean;
  healthPath: string;
  metricsPath: string | null;
  /** How to drop the engine's prompt/prefix cache between conditions, where it has one. */
  cacheReset: { method: 'POST' | 'GET'; path: string } | null;
  isLoadProgress(line: string): boolean;
  isListening(line: string): boolean;
  classifyFault(lines: readonly string[]): { code: ServerFaultCode; hint: string } | null;
  readEffectiveConfig(server: ServerAddress, logLines: readonly string[], argv: string[], pid?: number): Promise<EffectiveConfig>;
}

export async function fetchJson(url: string, init: RequestInit = {}): Promise<Record<string, unknown> | null> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(5000) });
    return response.ok ? ((await response.json()) as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function emptyEffectiveConfig(argv: string[]): EffectiveConfig {
  return {
    version: null,
    build: null,
    model: null,
    modelFileType: null,
    contextSize: null,
    contextPerSlot: null,
    slots: null,
    trainedContext: null,
    layersOffloaded: null,
    buffersMib: {},
    argv,
  };
}
