import path from 'node:path';
import type { EngineInfo } from '../../src/shared/contract/engine';
import { engineCacheDir } from '../../src/main/core/paths';
import { readPinnedSourceRecord, sourceDirFor } from '../../src/main/engines/llamacpp/engine-source';
import { locateEngine } from '../../src/main/engines/llamacpp/locate-engine';

/**
 * The real engine that `npm ci` built (or a configured one). Integration tests fail with
 * the fix rather than skip: without it they would prove nothing.
 */
export async function requireEngine(): Promise<EngineInfo> {
  const { engine, problems } = await locateEngine();
  if (!engine) throw new Error(`Integration tests need llama-server: ${problems.join('; ')}. Run ./bin/inferlab setup.`);
  return engine;
}

export function requireVocabFile(): string {
  const record = readPinnedSourceRecord(engineCacheDir());
  if (!record) throw new Error('The pinned llama.cpp source is not in the cache. Run ./bin/inferlab setup.');
  return path.join(sourceDirFor(engineCacheDir(), record.commit), 'models', 'ggml-vocab-llama-spm.gguf');
}
