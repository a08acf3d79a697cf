import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelEntry, ModelScan } from '../../shared/contract/models';
import { demoModelsDir } from '../core/paths';
import { hubCacheDir } from './hub/hub-cache';
import { assertTensorDataInFile, readGgufHeaderAsync, type GgufHeader } from './gguf-reader';

/** llama.cpp's `general.file_type` values (LLAMA_FTYPE_MOSTLY_*), as quantization labels. */
const FILE_TYPES: Record<number, string> = {
  0: 'F32',
  1: 'F16',
  2: 'Q4_0',
  3: 'Q4_1',
  7: 'Q8_0',
  8: 'Q5_0',
  9: 'Q5_1',
  10: 'Q2_K',
  11: 'Q3_K_S',
  12: 'Q3_K_M',
  13: 'Q3_K_L',
  14: 'Q4_K_S',
  15: 'Q4_K_M',
  16: 'Q5_K_S',
  17: 'Q5_K_M',
  18: 'Q6_K',
  19: 'IQ2_XXS',
  20: 'IQ2_XS',
  21: 'Q2_K_S',
  22: 'IQ3_XS',
  23: 'IQ3_XXS',
  24: 'IQ1_S',
  25: 'IQ4_NL',
  26: 'IQ3_S',
  27: 'IQ3_M',
  28: 'IQ2_S',
  29: 'IQ2_M',
  30: 'IQ4_XS',
  31: 'IQ1_M',
  32: 'BF16',
  36: 'TQ1_0',
  37: 'TQ2_0',
  38: 'MXFP4_MOE',
};

const SPLIT_PATTERN = /^(.*)-(\d{5})-of-(\d{5})\.gguf$/;
const MAX_SCAN_DEPTH = 6;

/** Where llama.cpp's `-hf` downloads go (its LLAMA_CACHE). */
function llamaCacheDir(env: NodeJS.ProcessEnv, home: string): string {
  if (env.LLAMA_CACHE) return env.LLAMA_CACHE;
  if (process.platform === 'darwin') return path.join(home, 'Library', 'Caches', 'llama.cpp');
  if (process.platform === 'win32') return path.join(env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'llama.cpp');
  return path.join(env.XDG_CACHE_HOME ?? path.join(home, '.cache'), 'llama.cpp');
}

/**
 * The folders scanned when the user names none: demo models, ~/models, the Hugging Face cache,
 * LM Studio's folders, llama.cpp's download cache and Ollama's model store.
 */
export function defaultModelFolders(env: NodeJS.ProcessEnv = process.env): string[] {
  const home = os.homedir();
  return [
    demoModelsDir(env),
    path.join(home, 'models'),
    hubCacheDir(env),
    path.join(home, '.lmstudio', 'models'),
    path.join(home, '.cache', 'lm-studio', 'models'),
    llamaCacheDir(env, home),
    env.OLLAMA_MODELS ?? path.join(home, '.ollama', 'models'),
  ];
}

/** A folder's entries; none for a folder that cannot be read (a scan reports what it finds, it does not stop). */
async function folderEntries(dir: string): Promise<fs.Dirent[]> {
  try {
    return await fs.promises.readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** A path's stat, or null where there is nothing (or nothing readable) there. */
async function statOrNull(file: string): Promise<fs.Stats | null> {
  try {
    return await fs.promises.stat(file);
  } catch {
    return null;
  }
}

const OLLAMA_MODEL_LAYER = 'application/vnd.ollama.image.model';

/**
 * Ollama keeps weights as content-addressed blobs without a .gguf name; its manifests
 * (manifests/HOST/NAMESPACE/MODEL/TAG, JSON) say which blob holds each model's weights.
 */
async function findOllamaModels(store: string): Promise<{ file: string; label: string }[]> {
  const manifests = path.join(store, 'manifests');
  const found: { file: string; label: string }[] = [];
  const walk = async (dir: string, trail: string[]) => {
    const entries = await folderEntries(dir);
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && trail.length < 4) await walk(full, [...trail, entry.name]);
      else if (entry.isFile() && trail.length >= 1) {
        try {
          const manifest = JSON.parse(await fs.promises.readFile(full, 'utf8')) as { layers?: { mediaType?: string; digest?: string }[] };
          const digest = manifest.layers?.find((layer) => layer.mediaType === OLLAMA_MODEL_LAYER)?.digest;
          if (typeof digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(digest)) continue;
          const model = trail[trail.length - 1]!;
          const namespace = trail.length >= 3 && trail[trail.length - 2] !== 'library' ? `${trail[trail.length - 2]}/` : '';
          found.push({ file: path.join(store, 'blobs', digest.replace(':', '-')), label: `${namespace}${model}:${entry.name}` });
        } catch {
          // A manifest being written, or not JSON: not a model this scan can name.
        }
      }
    }
  };
  await walk(manifests, []);
  return found;
}

async function isOllamaStore(dir: string): Promise<boolean> {
  return (await statOrNull(path.join(dir, 'manifests'))) !== null && (await statOrNull(path.join(dir, 'blobs'))) !== null;
}

function numberOf(header: GgufHeader, key: string): number | null {
  const value = header.metadata.get(key);
  return typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : null;
}

function stringOf(header: GgufHeader, key: string): string | null {
  const value = header.metadata.get(key);
  return typeof value === 'string' ? value : null;
}

function invalid(file: string, parts: string[], sizeBytes: number, reason: string, source: ModelEntry['source']): ModelEntry {
  return {
    path: file,
    name: path.basename(file),
    parts,
    sizeBytes,
    valid: false,
    invalidReason: reason,
    architecture: null,
    parameterCount: null,
    quantization: null,
    contextLength: null,
    layers: null,
    tokenizer: null,
    synthetic: false,
    source,
  };
}

/** The parts of a split model, from its first shard's name; a single file is its own part. */
export function splitParts(file: string): string[] {
  const match = SPLIT_PATTERN.exec(path.basename(file));
  if (!match) return [file];
  const total = Number(match[3]);
  return Array.from({ length: total }, (_, index) =>
    path.join(path.dirname(file), `${match[1]}-${String(index + 1).padStart(5, '0')}-of-${match[3]}.gguf`),
  );
}

/**
 * Reads a model's headers (every part of a split model) into a library entry. Never throws for
 * bad files. Every read runs on Node's I/O pool: a model folder on a stalled network mount
 * delays this call, not the service.
 */
/** Why an adapter file is no model: it is applied to one (a profile's loraAdapter). */
export const NOT_A_MODEL_BUT_ADAPTER = 'a LoRA adapter, not a model: serve a model and apply it with the profile field loraAdapter';
/** A file served beside a model rather than as one: a LoRA adapter or an image projector. */
export const isCompanion = (model: Pick<ModelEntry, 'invalidReason'>): boolean =>
  model.invalidReason === NOT_A_MODEL_BUT_ADAPTER || model.invalidReason === NOT_A_MODEL_BUT_PROJECTOR;

/** Why a multimodal projector is no model: it turns images into a model's tokens (a profile's projector). */
export const NOT_A_MODEL_BUT_PROJECTOR =
  'an image projector (mmproj), not a model: serve the model it was made for with the profile field projector';

export async function describeModel(file: string, source: ModelEntry['source'] = 'file'): Promise<ModelEntry> {
  const parts = splitParts(file);
  const stats = await Promise.all(parts.map(statOrNull));
  const sizeBytes = stats.reduce((sum, stat) => sum + (stat?.size ?? 0), 0);
  const missing = parts.filter((_, index) => stats[index] === null);
  if (missing.length > 0)
    return invalid(
      file,
      parts,
      sizeBytes,
      `missing ${missing.length === parts.length && parts.length === 1 ? 'file' : `split part(s): ${missing.map((part) => path.basename(part)).join(', ')}`}`,
      source,
    );
  let first: GgufHeader | null = null;
  let parameterCount = 0;
  try {
    for (const part of parts) {
      const header = await readGgufHeaderAsync(part);
      assertTensorDataInFile(part, header);
      first ??= header;
      for (const tensor of header.tensors) parameterCount += tensor.shape.reduce((product, dim) => product * dim, 1);
    }
  } catch (error) {
    return invalid(file, parts, sizeBytes, (error as Error).message.replace(`${file}: `, ''), source);
  }
  const header = first!;
  // An adapter carries an architecture too, but serves nothing on its own.
  if (stringOf(header, 'general.type') === 'adapter') return invalid(file, parts, sizeBytes, NOT_A_MODEL_BUT_ADAPTER, source);
  const architecture = stringOf(header, 'general.architecture');
  if (architecture === 'clip') return invalid(file, parts, sizeBytes, NOT_A_MODEL_BUT_PROJECTOR, source);
  if (!architecture) return invalid(file, parts, sizeBytes, 'no general.architecture in the header: not a model file', source);
  const fileType = numberOf(header, 'general.file_type');
  const poolingType = numberOf(header, `${architecture}.pooling_type`);
  return {
    path: file,
    name: stringOf(header, 'general.name') ?? path.basename(file, '.gguf'),
    parts,
    sizeBytes,
    valid: true,
    invalidReason: null,
    architecture,
    parameterCount,
    quantization: fileType === null ? null : (FILE_TYPES[fileType] ?? `type ${fileType}`),
    contextLength: numberOf(header, `${architecture}.context_length`),
    layers: numberOf(header, `${architecture}.block_count`),
    tokenizer: stringOf(header, 'tokenizer.ggml.model'),
    poolingType,
    // llama.h's LLAMA_POOLING_TYPE_RANK, or the classifier head a reranker's conversion keeps.
    rankingHead: poolingType === 4 || header.tensors.some((tensor) => /^cls(_out)?\./.test(tensor.name)),
    synthetic: header.metadata.get('inferlab.synthetic') === true,
    source,
  };
}

async function findGgufFiles(dir: string, depth: number, found: string[]): Promise<void> {
  const entries = await folderEntries(dir);
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && depth < MAX_SCAN_DEPTH && !entry.name.startsWith('.')) await findGgufFiles(full, depth + 1, found);
    // The Hugging Face cache keeps models as symlinks into its blob store.
    else if ((entry.isFile() || entry.isSymbolicLink()) && entry.name.toLowerCase().endsWith('.gguf')) found.push(full);
  }
}

/**
 * Scans folders and files for GGUF models. Split models appear once (from their first
 * part); invalid files are listed with the reason, LoRA adapters and image projectors left out (they are no models);
 * unreadable folders are reported.
 */
export async function scanModels(
  targets: readonly string[],
  options: { reportMissing?: boolean; withCompanions?: boolean } = {},
): Promise<ModelScan> {
  const problems: string[] = [];
  const files = new Set<string>();
  const sources = new Map<string, ModelEntry['source']>();
  const labels = new Map<string, string>();
  const demoDir = demoModelsDir();
  for (const target of targets) {
    const resolved = path.resolve(target);
    const stat = await statOrNull(resolved);
    if (!stat) {
      if (options.reportMissing) problems.push(`${resolved}: no such file or folder`);
      continue;
    }
    const found: string[] = [];
    if (stat.isDirectory() && (await isOllamaStore(resolved))) {
      for (const { file, label } of await findOllamaModels(resolved)) {
        files.add(file);
        sources.set(file, 'ollama');
        labels.set(file, label);
      }
      continue;
    }
    if (stat.isDirectory()) await findGgufFiles(resolved, 0, found);
    else found.push(resolved);
    for (const file of found) {
      const match = SPLIT_PATTERN.exec(path.basename(file));
      if (match && match[2] !== '00001') continue;
      files.add(file);
      sources.set(file, path.dirname(file) === demoDir ? 'demo' : stat.isDirectory() ? 'folder' : 'file');
    }
  }
  const models: ModelEntry[] = [];
  for (const file of [...files].sort()) {
    const model = await describeModel(file, sources.get(file));
    // Adapters and projectors beside models are not models to list (the demo ones among them); a plan asks for them.
    if (!options.withCompanions && isCompanion(model)) continue;
    const label = labels.get(file);
    models.push(label ? { ...model, name: `${label} (Ollama)` } : model);
  }
  return { models, problems };
}
