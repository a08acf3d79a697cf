import fs from 'node:fs';
import path from 'node:path';
import si from 'systeminformation';
import { sweepOrphanedServers } from './server/orphan-sweep';
import { ServerSessionStore } from './store/server-sessions';
import type { DoctorCheck, DoctorReport, GpuSummary } from '../shared/contract/doctor';
import type { EngineBackend, EngineInfo } from '../shared/contract/engine';
import { engineCacheDir, projectRoot, resolveDatabasePath } from './core/paths';
import { isExecutable } from './core/which';
import { planEngine, type MachineFacts } from './engines/llamacpp/engine-plan';
import { probeMachine } from './engines/llamacpp/machine-probe';
import { describeEngineBuild, gpuEngineCheck } from './engines/llamacpp/engine-verdict';
import { missingBuildPrerequisites } from './engines/llamacpp/engine-build';
import { locateEngine } from './engines/llamacpp/locate-engine';
import { gpuBuildKey, readFailedGpuBuild } from './engines/llamacpp/gpu-build-fallback';
import { checkDemoFile, DEMO_VARIANTS } from './models/demo-models';
import { openDatabase, quickCheck, schemaVersion } from './store/database';

/** Where Electron's npm package records its downloaded binary, if the download happened. */
export function electronBinaryPath(root = projectRoot()): string | null {
  const packageDir = path.join(root, 'node_modules', 'electron');
  try {
    const relative = fs.readFileSync(path.join(packageDir, 'path.txt'), 'utf8').trim();
    const binary = path.join(packageDir, 'dist', relative);
    return isExecutable(binary) ? binary : null;
  } catch {
    return null;
  }
}

export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = [env.INFERLAB_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((value): value is string =>
    Boolean(value),
  );
  return candidates.find((candidate) => isExecutable(candidate)) ?? null;
}

/**
 * The GPUs runs will measure: nvidia-smi's list where the driver answers (the tool the
 * sampler reads, and one that sees a GPU inside containers where the PCI scan does not),
 * else the operating system's list of graphics controllers.
 */
async function gpuInventory(facts: MachineFacts): Promise<GpuSummary[]> {
  if (facts.nvidia)
    return facts.nvidia.gpus.map((model) => ({ vendor: 'NVIDIA', model, vramMib: null, driver: facts.nvidia!.driverVersion }));
  try {
    const graphics = await si.graphics();
    return graphics.controllers
      .filter((controller) => /nvidia|amd|advanced micro|intel|apple/i.test(controller.vendor ?? ''))
      .map((controller) => ({
        vendor: controller.vendor ?? 'unknown',
        model: controller.model ?? 'unknown',
        vramMib: typeof controller.vram === 'number' && controller.vram > 0 ? controller.vram : null,
        driver: controller.driverVersion || null,
      }));
  } catch {
    return [];
  }
}

/** Opens the run database (migrating it) and runs `PRAGMA quick_check` on it. */
export function checkDatabase(databasePath: string): DoctorCheck {
  const label = 'run database';
  let db;
  try {
    db = openDatabase(databasePath);
  } catch (error) {
    return {
      id: 'database',
      label,
      status: 'missing',
      detail: (error as Error).message,
      fix: 'pass a writable path with --db or INFERLAB_DB',
    };
  }
  try {
    const version = schemaVersion(db);
    const problems = quickCheck(db);
    if (problems.length === 1 && problems[0] === 'ok')
      return { id: 'database', label, status: 'ok', detail: `${databasePath} (schema version ${version}; quick_check: ok)`, fix: null };
    return {
      id: 'database',
      label,
      status: 'warning',
      detail: `${databasePath} is damaged; quick_check: ${problems.join('; ')}`,
      fix: `copy what is readable into a new file (sqlite3 "${databasePath}" ".recover" | sqlite3 recovered.db) and use it with --db`,
    };
  } catch (error) {
    return {
      id: 'database',
      label,
      status: 'warning',
      detail: `${databasePath} is damaged; quick_check failed: ${(error as Error).message}`,
      fix: `copy what is readable into a new file (sqlite3 "${databasePath}" ".recover" | sqlite3 recovered.db) and use it with --db`,
    };
  } finally {
    db.close();
  }
}

/**
 * Servers whose owner died without stopping them (and whose watchdog died too) hold memory
 * and ports; doctor stops them like every other command does, and says which.
 */
async function orphanedServersCheck(databasePath: string): Promise<DoctorCheck> {
  const label = 'orphaned servers';
  let db;
  try {
    db = openDatabase(databasePath);
  } catch (error) {
    return { id: 'orphans', label, status: 'warning', detail: `not checked: ${(error as Error).message}`, fix: null };
  }
  try {
    const swept = await sweepOrphanedServers(new ServerSessionStore(db));
    if (swept.killed.length === 0) return { id: 'orphans', label, status: 'ok', detail: 'no orphaned servers', fix: null };
    const which = swept.killed.map((server) => `pid ${server.pid} on port ${server.port ?? '?'}`).join(', ');
    return {
      id: 'orphans',
      label,
      status: 'warning',
      detail: `stopped ${swept.killed.length} orphaned server${swept.killed.length === 1 ? '' : 's'}: ${which}`,
      fix: null,
    };
  } catch (error) {
    return { id: 'orphans', label, status: 'warning', detail: `not checked: ${(error as Error).message}`, fix: null };
  } finally {
    db.close();
  }
}

function engineCheck(engine: EngineInfo | null, problems: string[], env: NodeJS.ProcessEnv): DoctorCheck {
  return engine
    ? {
        id: 'engine',
        label: 'llama.cpp engine',
        status: 'ok',
        detail: `${engine.serverPath} (${engine.origin}; ${engine.version ?? 'version unknown'}${engine.backend ? `; ${engine.backend}` : ''}${engine.build ? `; ${describeEngineBuild(engine.build)}` : ''})`,
        fix: null,
      }
    : {
        id: 'engine',
        label: 'llama.cpp engine',
        status: 'missing',
        detail: problems.join('; '),
        fix: './bin/inferlab setup  (builds llama.cpp into ' + engineCacheDir(env) + ')',
      };
}

/** Only a managed engine is built here: the tools that build it. */
function buildToolsCheck(backend: EngineBackend, plan: { route: string }, env: NodeJS.ProcessEnv): DoctorCheck {
  const missing = missingBuildPrerequisites(backend, env);
  return missing.length === 0
    ? {
        id: 'build-tools',
        label: 'engine build tools',
        status: 'ok',
        detail: `cmake, a C++ compiler, git and tar found; setup would build ${plan.route === 'prebuilt' ? 'on prebuilt libraries' : 'from source'} for ${backend}`,
        fix: null,
      }
    : {
        id: 'build-tools',
        label: 'engine build tools',
        status: 'missing',
        detail: `missing ${missing.map((item) => item.what).join(', ')}`,
        fix: missing.map((item) => item.fix).join('; '),
      };
}

function demoModelsCheck(demoModels: Awaited<ReturnType<typeof checkDemoFile>>[]): DoctorCheck {
  const broken = demoModels.flatMap((state) => (state.status === 'ok' ? [] : [state]));
  return broken.length === 0
    ? {
        id: 'demo-models',
        label: 'demo models',
        status: 'ok',
        detail:
          demoModels.map((state) => state.ref).join(', ') + ' (synthetic: seeded weights shaped to follow a short text, real compute)',
        fix: null,
      }
    : {
        id: 'demo-models',
        label: 'demo models',
        status: 'missing',
        detail: broken.map((state) => `${state.ref}: ${state.status} (${state.reason})`).join('; '),
        fix: './bin/inferlab setup',
      };
}

function gpuCheck(gpus: Awaited<ReturnType<typeof gpuInventory>>): DoctorCheck {
  return gpus.length > 0
    ? {
        id: 'gpu',
        label: 'GPU',
        status: 'ok',
        detail: gpus
          .map((gpu) => `${gpu.model}${gpu.vramMib ? ` (${gpu.vramMib} MiB)` : ''}${gpu.driver ? `, driver ${gpu.driver}` : ''}`)
          .join('; '),
        fix: null,
      }
    : {
        id: 'gpu',
        label: 'GPU',
        status: 'warning',
        detail: 'no GPU found: runs use the CPU and record no GPU telemetry',
        fix: 'install the NVIDIA driver (nvidia-smi) or AMD ROCm (amd-smi) to measure a GPU',
      };
}

/** What the desktop app and the UI tests need beyond the CLI. */
function appChecks(env: NodeJS.ProcessEnv): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  const electron = electronBinaryPath();
  checks.push(
    electron
      ? { id: 'electron', label: 'Electron binary (desktop app)', status: 'ok', detail: electron, fix: null }
      : {
          id: 'electron',
          label: 'Electron binary (desktop app)',
          status: 'warning',
          detail: 'not downloaded: the desktop window cannot open; the CLI works without it',
          fix: 'on a machine with internet access: node node_modules/electron/install.js',
        },
  );

  const chromium = chromiumPath(env);
  checks.push(
    chromium
      ? { id: 'chromium', label: 'Chromium (UI tests)', status: 'ok', detail: chromium, fix: null }
      : {
          id: 'chromium',
          label: 'Chromium (UI tests)',
          status: 'warning',
          detail: 'not found: browser UI tests cannot run',
          fix: 'apt-get install -y chromium (or set INFERLAB_CHROMIUM)',
        },
  );

  return checks;
}

/** Everything `inferlab doctor` reports: each item ok, missing or a warning, with the fix. */
export async function runDoctor(options: { dbPath?: string; env?: NodeJS.ProcessEnv } = {}): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const checks: DoctorCheck[] = [];
  const facts = probeMachine(env);
  const plan = planEngine(facts);
  const lookup = await locateEngine(env).catch((error: Error) => ({ engine: null, problems: [error.message] }));
  const engine = lookup.engine;
  checks.push(engineCheck(engine, lookup.problems, env));
  const gpuEngine = gpuEngineCheck(facts, engine, plan, readFailedGpuBuild(engineCacheDir(env), gpuBuildKey(plan, facts.nvcc)));
  if (gpuEngine) checks.push(gpuEngine);

  if (!engine || engine.origin === 'managed') checks.push(buildToolsCheck(plan.backend, plan, env));
  const demoModels = await Promise.all(DEMO_VARIANTS.map((variant) => checkDemoFile(variant)));
  checks.push(demoModelsCheck(demoModels));
  const gpus = await gpuInventory(facts);
  checks.push(gpuCheck(gpus));
  const databasePath = resolveDatabasePath(options.dbPath, env);
  checks.push(checkDatabase(databasePath));
  checks.push(await orphanedServersCheck(databasePath));

  checks.push(...appChecks(env));
  return { checks, engine, gpus, databasePath, demoModels };
}
