import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { sha256File } from '../core/hash';
import { didYouMean } from '../core/closest-name';
import { demoModelsDir } from '../core/paths';
import { quantizeModel } from './quantize';
import { rememberVerified, verifiedSince } from './verified-stamps';
import type { SyntheticModelShape } from './synthetic-model';

export interface DemoVariant {
  /** The name accepted everywhere a model is: `demo:q8_0`. */
  ref: string;
  fileName: string;
  /** llama-quantize type, or null for the F16 original. */
  quantizeTo: string | null;
}

export const DEMO_VARIANTS: readonly DemoVariant[] = [
  { ref: 'demo:f16', fileName: 'demo-f16.gguf', quantizeTo: null },
  { ref: 'demo:q8_0', fileName: 'demo-q8_0.gguf', quantizeTo: 'Q8_0' },
  { ref: 'demo:q4_k_m', fileName: 'demo-q4_k_m.gguf', quantizeTo: 'Q4_K_M' },
];

/** The demo LoRA adapter, made for the demo models (any of their quantizations): a file beside them, not a model. */
export const DEMO_ADAPTER: DemoVariant = { ref: 'demo:lora', fileName: 'demo-lora.gguf', quantizeTo: null };
/** The demo image projector (llama-server's --mmproj) for the demo models: images become tokens they take. */
export const DEMO_PROJECTOR: DemoVariant = { ref: 'demo:mmproj', fileName: 'demo-mmproj.gguf', quantizeTo: null };
const DEMO_FILES = [...DEMO_VARIANTS, DEMO_ADAPTER, DEMO_PROJECTOR];

/**
 * Bumped whenever the generator's output changes, so old demo files are regenerated: a
 * manifest of another version is ignored, which marks every file as made by another version.
 * 2: weights shaped to follow a successor map (1: plain random weights).
 */
const GENERATOR_VERSION = 2;
const MANIFEST_NAME = 'demo-models.json';

interface DemoManifest {
  generatorVersion: number;
  shape: SyntheticModelShape;
  files: Record<string, { sha256: string; size: number }>;
}

export type DemoFileState =
  { ref: string; path: string; status: 'ok' } | { ref: string; path: string; status: 'missing' | 'corrupt'; reason: string };

function readManifest(dir: string): DemoManifest | null {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST_NAME), 'utf8')) as DemoManifest;
    return manifest.generatorVersion === GENERATOR_VERSION ? manifest : null;
  } catch {
    return null;
  }
}

function writeManifest(dir: string, manifest: DemoManifest): void {
  const file = path.join(dir, MANIFEST_NAME);
  fs.writeFileSync(`${file}.partial`, JSON.stringify(manifest, null, 2));
  fs.renameSync(`${file}.partial`, file);
}

/** Checks one demo file against the sha256 recorded when it was made (read again only after the file changed). */
export async function checkDemoFile(variant: DemoVariant, dir = demoModelsDir()): Promise<DemoFileState> {
  const file = path.join(dir, variant.fileName);
  const expected = readManifest(dir)?.files[variant.fileName];
  if (!fs.existsSync(file)) return { ref: variant.ref, path: file, status: 'missing', reason: 'file not found' };
  if (!expected)
    return { ref: variant.ref, path: file, status: 'corrupt', reason: 'not recorded in demo-models.json (made by another version)' };
  const stat = fs.statSync(file);
  if (stat.size !== expected.size)
    return { ref: variant.ref, path: file, status: 'corrupt', reason: `size ${stat.size} bytes, expected ${expected.size}` };
  if (verifiedSince(dir, variant.fileName, stat, expected.sha256)) return { ref: variant.ref, path: file, status: 'ok' };
  const hashStartedAt = Date.now();
  if ((await sha256File(file)) !== expected.sha256)
    return { ref: variant.ref, path: file, status: 'corrupt', reason: 'sha256 differs from the one recorded when it was made' };
  rememberVerified(dir, variant.fileName, stat, expected.sha256, hashStartedAt);
  return { ref: variant.ref, path: file, status: 'ok' };
}

export function isDemoRef(ref: string): boolean {
  return ref.startsWith('demo:');
}

/**
 * Turns a model reference into a file path: a `demo:` name (verified, never used when
 * missing or corrupt) or a path to a GGUF file.
 */
export async function resolveModelRef(ref: string, dir = demoModelsDir()): Promise<string> {
  if (isDemoRef(ref)) {
    const variant = DEMO_FILES.find((candidate) => candidate.ref === ref);
    if (!variant) {
      // Compared after the prefix every demo name shares, so a short name gets the short leeway it should.
      const bare = (demoRef: string) => demoRef.slice('demo:'.length);
      const hint = didYouMean(
        bare(ref),
        DEMO_FILES.map((file) => bare(file.ref)),
        (name) => `demo:${name}`,
      );
      throw new AppError(
        ErrorCode.InvalidInput,
        `Unknown demo model "${ref}"${hint}; expected one of ${DEMO_VARIANTS.map((v) => v.ref).join(', ')} (or ${DEMO_ADAPTER.ref}, the demo LoRA adapter, or ${DEMO_PROJECTOR.ref}, the demo image projector)`,
      );
    }
    const state = await checkDemoFile(variant, dir);
    if (state.status !== 'ok') {
      throw new AppError(
        ErrorCode.DemoModelInvalid,
        `Demo model ${ref} (${state.path}) is ${state.status}: ${state.reason}. Run ./bin/inferlab setup to regenerate it.`,
      );
    }
    return state.path;
  }
  const file = path.resolve(ref);
  // Asynchronous: a model path a request names may be on a stalled mount.
  const stat = await fs.promises.stat(file).catch(() => null);
  if (!stat)
    throw new AppError(
      ErrorCode.NotFound,
      `Model file not found: ${file}. Pass a GGUF path or one of ${DEMO_VARIANTS.map((v) => v.ref).join(', ')}`,
    );
  if (!stat.isFile()) throw new AppError(ErrorCode.InvalidInput, `Model path is not a file: ${file}`);
  return file;
}

/**
 * Makes every demo model present and intact: regenerates the F16 original when it is
 * missing or corrupt (and then every quantization derived from it), and re-derives any
 * quantization that is.
 */
export async function ensureDemoModels(options: {
  vocabFile: string;
  quantizeBinary: string;
  dir?: string;
  force?: boolean;
  log: (line: string) => void;
}): Promise<DemoFileState[]> {
  // The generator (and the GGUF library behind it) loads only when demo models are made or checked.
  const { DEMO_MODEL_SHAPE, writeSyntheticModel } = await import('./synthetic-model');
  const dir = options.dir ?? demoModelsDir();
  fs.mkdirSync(dir, { recursive: true });
  const manifest: DemoManifest = readManifest(dir) ?? { generatorVersion: GENERATOR_VERSION, shape: DEMO_MODEL_SHAPE, files: {} };
  const record = async (variant: DemoVariant) => {
    const file = path.join(dir, variant.fileName);
    manifest.files[variant.fileName] = { sha256: await sha256File(file), size: fs.statSync(file).size };
    writeManifest(dir, manifest);
  };
  let originalRemade = false;
  const states: DemoFileState[] = [];
  for (const variant of DEMO_VARIANTS) {
    const state = options.force ? null : await checkDemoFile(variant, dir);
    if (state?.status === 'ok' && !(originalRemade && variant.quantizeTo)) {
      states.push(state);
      continue;
    }
    const file = path.join(dir, variant.fileName);
    if (state && state.status !== 'ok') options.log(`${variant.fileName}: ${state.status} (${state.reason}); regenerating`);
    fs.rmSync(file, { force: true });
    delete manifest.files[variant.fileName];
    if (variant.quantizeTo === null) {
      options.log(`writing ${variant.fileName} (synthetic llama model, generator ${GENERATOR_VERSION}, seed ${DEMO_MODEL_SHAPE.seed})`);
      await writeSyntheticModel(file, options.vocabFile);
      originalRemade = true;
    } else {
      const source = path.join(dir, DEMO_VARIANTS[0]!.fileName);
      options.log(`quantizing to ${variant.fileName} (${variant.quantizeTo})`);
      await quantizeModel({ quantizeBinary: options.quantizeBinary, source, target: file, type: variant.quantizeTo });
    }
    await record(variant);
    states.push({ ref: variant.ref, path: file, status: 'ok' });
  }
  for (const companion of DEMO_COMPANIONS)
    states.push(await ensureDemoCompanion(companion, dir, DEMO_MODEL_SHAPE, originalRemade || options.force === true, record, options.log));
  return states;
}

/** A file made for the demo models rather than a model: what it is, and how it is written for their shape. */
interface DemoCompanion {
  variant: DemoVariant;
  write: (file: string, shape: SyntheticModelShape) => Promise<string>;
}

const DEMO_COMPANIONS: readonly DemoCompanion[] = [
  {
    variant: DEMO_ADAPTER,
    write: async (file, shape) => {
      const { DEMO_ADAPTER_SHAPE, writeSyntheticAdapter } = await import('./synthetic-adapter');
      writeSyntheticAdapter(file, shape);
      return `LoRA rank ${DEMO_ADAPTER_SHAPE.rank} on ${DEMO_ADAPTER_SHAPE.targets.join(' and ')}, seed ${DEMO_ADAPTER_SHAPE.seed}`;
    },
  },
  {
    variant: DEMO_PROJECTOR,
    write: async (file, shape) => {
      const { DEMO_PROJECTOR_IMAGE_TOKENS, DEMO_PROJECTOR_SHAPE, writeSyntheticProjector } = await import('./synthetic-projector');
      writeSyntheticProjector(file, shape);
      return `image projector, ${DEMO_PROJECTOR_IMAGE_TOKENS} tokens per image, seed ${DEMO_PROJECTOR_SHAPE.seed}`;
    },
  },
];

/** A demo companion file, written again when missing, corrupt, or when the model it is made for was. */
async function ensureDemoCompanion(
  { variant, write }: DemoCompanion,
  dir: string,
  shape: SyntheticModelShape,
  modelRemade: boolean,
  record: (variant: DemoVariant) => Promise<void>,
  log: (line: string) => void,
): Promise<DemoFileState> {
  const file = path.join(dir, variant.fileName);
  const state = modelRemade ? null : await checkDemoFile(variant, dir);
  if (state?.status === 'ok') return state;
  fs.rmSync(file, { force: true });
  log(`writing ${variant.fileName} (${await write(file, shape)})`);
  await record(variant);
  return { ref: variant.ref, path: file, status: 'ok' };
}
