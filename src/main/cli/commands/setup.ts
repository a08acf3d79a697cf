import { ENGINE_BACKENDS, type EngineBackend } from '../../../shared/contract/engine';
import { ErrorCode } from '../../../shared/errors';
import { AppError } from '../../core/errors';
import { shellAccess } from '../../services/access';
import type { SetupResult } from '../../services/engine-service';
import { openCliServices } from '../service-context';
import { parseOptions, type CommandHandler } from '../args';
import { stderrBuildProgress } from '../progress';
import { SETUP_USAGE as USAGE } from '../usage';

export const setupCommand: CommandHandler = async (args, signal) => {
  const { values } = parseOptions(
    args,
    {
      force: { type: 'boolean' },
      backend: { type: 'string' },
      'from-source': { type: 'boolean' },
      'from-npm-install': { type: 'boolean' },
    },
    USAGE,
  );
  const backend = values.backend as EngineBackend | undefined;
  if (backend !== undefined && !ENGINE_BACKENDS.includes(backend))
    throw new AppError(ErrorCode.Usage, `--backend must be one of ${ENGINE_BACKENDS.join(', ')}, got "${values.backend}"`);
  const log = (line: string) => process.stderr.write(`inferlab setup: ${line}\n`);
  if (values['from-npm-install'] && process.env.INFERLAB_SKIP_SETUP === '1') {
    log('skipped (INFERLAB_SKIP_SETUP=1); run ./bin/inferlab setup later');
    return 0;
  }
  try {
    const started = performance.now();
    const container = await openCliServices(undefined, shellAccess());
    let result: SetupResult;
    try {
      result = await container.engine.setupAndWait(
        { backend, force: values.force, fromSource: values['from-source'] },
        { progress: stderrBuildProgress(), log, signal },
      );
    } finally {
      await container.dispose();
    }
    log(
      `engine ready: ${result.engine.serverPath} (${result.engine.version ?? 'unknown version'}) in ${result.engineSeconds.toFixed(2)} s`,
    );
    log(`demo models: ${result.demoModels.map((state) => state.ref).join(', ')}`);
    // Repeated last, where a scrolling build log cannot bury them.
    for (const warning of result.warnings) process.stderr.write(`\ninferlab setup: WARNING: ${warning}\n`);
    log(`done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return 0;
  } catch (error) {
    if (!values['from-npm-install']) throw error;
    // npm ci must still complete: the rest of the app works without a local engine.
    log(`could not finish: ${(error as Error).message}`);
    log('npm install continues; fix the above, then run ./bin/inferlab setup (./bin/inferlab doctor shows the state)');
    return 0;
  }
};
