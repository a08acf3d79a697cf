import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../../shared/errors';
import { keepNpmCredentials } from '../../core/child-env';
import { AppError } from '../../core/errors';
import { runToCompletion } from '../../core/process';

export interface PinnedPackageRef {
  name: string;
  version: string;
  /** The registry's integrity hash of the tarball ("sha512-…"). */
  integrity: string;
}

function npmCommand(env: NodeJS.ProcessEnv): { binary: string; prefixArgs: string[] } {
  const npmCli = env.npm_execpath;
  if (npmCli && npmCli.endsWith('.js')) return { binary: process.execPath, prefixArgs: [npmCli] };
  return { binary: process.platform === 'win32' ? 'npm.cmd' : 'npm', prefixArgs: [] };
}

export async function mustRun(
  step: string,
  binary: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; keepCredentials?: (name: string) => boolean; signal?: AbortSignal } = {},
): Promise<string> {
  const result = await runToCompletion(binary, args, options);
  if (options.signal?.aborted) throw new AppError(ErrorCode.EngineBuildFailed, `${step} was cancelled; nothing was installed`);
  if (result.code !== 0) {
    throw new AppError(
      ErrorCode.EngineBuildFailed,
      `${step} failed (${binary} ${args.join(' ')}, exit ${result.code ?? result.signal}):\n${result.output.split('\n').slice(-20).join('\n')}`,
    );
  }
  return result.output;
}

/** Refuses a tarball whose bytes are not exactly the pinned release's (the registry's integrity hash). */
export function assertPinnedIntegrity(tarballPath: string, expected: string): void {
  const integrity = `sha512-${crypto.createHash('sha512').update(fs.readFileSync(tarballPath)).digest('base64')}`;
  if (integrity !== expected) {
    throw new AppError(
      ErrorCode.EngineBuildFailed,
      `The downloaded ${path.basename(tarballPath)} does not match the pinned integrity hash (got ${integrity}); refusing to build from it.`,
    );
  }
}

/**
 * Downloads one pinned package's tarball into `dir` through npm (so the user's registry,
 * proxy and credentials apply) and checks its integrity. Returns the tarball's path.
 */
export async function packPinnedPackage(
  ref: PinnedPackageRef,
  dir: string,
  { env = process.env, signal }: { env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<string> {
  const npm = npmCommand(env);
  const before = new Set(fs.readdirSync(dir));
  await mustRun('npm pack', npm.binary, [...npm.prefixArgs, 'pack', `${ref.name}@${ref.version}`, '--pack-destination', dir, '--silent'], {
    cwd: dir,
    env,
    keepCredentials: keepNpmCredentials,
    signal,
  });
  const tarball = fs.readdirSync(dir).find((name) => name.endsWith('.tgz') && !before.has(name));
  if (!tarball) throw new AppError(ErrorCode.EngineBuildFailed, `npm pack ${ref.name}@${ref.version} produced no tarball`);
  const tarballPath = path.join(dir, tarball);
  assertPinnedIntegrity(tarballPath, ref.integrity);
  return tarballPath;
}
