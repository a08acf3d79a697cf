import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { readUserConfig } from '../core/config';
import { AppError } from '../core/errors';
import { userDataDir } from '../core/paths';
import { rootedPaths, unrestrictedPaths, type PathKind, type PathPolicy } from '../core/path-policy';
import { configuredEndpointHeaders, endpointCovers, endpointHeaders, isLoopbackUrl } from '../engines/adapters/endpoints';
import { isDemoRef, resolveModelRef } from '../models/demo-models';
import { defaultModelFolders } from '../models/model-library';
import { builtinWorkloadDir, workloadPath } from '../workload/workload-files';
import type { ImageDef, WorkloadDef } from '../workload/workload-types';
import type { ServerProfile } from '../../shared/contract/server';
import { loraAdapterEntries } from '../../shared/lora-adapter-entry';

/** What the face calling the services may reach: which files, and which endpoint gets which key. */
export interface ServiceAccess {
  /** Who is calling: the person at the shell, or a request over RPC (browser, desktop window). */
  face: 'shell' | 'rpc';
  paths: PathPolicy;
  /** The key for an endpoint; `keyVariable` (an environment variable's name) only from the shell. */
  endpointHeaders(url: string, keyVariable?: string | null): Record<string, string>;
  /** Refuses an endpoint this face may not send requests to. */
  checkEndpoint(url: string): void;
}

/**
 * Requests over RPC: model files under the usual model folders and `roots.models`, workload
 * files among the built-ins, `<data>/workloads` and `roots.workloads`, exported runs to import
 * under `<data>/results` and `roots.results`; endpoints on loopback, under `roots.endpoints` or
 * `endpointKeys`; API keys only to the endpoints `endpointKeys` names. The roots and keys change only in the config file.
 */
export function rpcAccess(env: NodeJS.ProcessEnv = process.env): ServiceAccess {
  const config = readUserConfig(env);
  const roots: Record<PathKind, string[]> = {
    model: [...defaultModelFolders(env), ...(config.roots?.models ?? [])],
    workload: [builtinWorkloadDir(), path.join(userDataDir(env), 'workloads'), ...(config.roots?.workloads ?? [])],
    // Evaluation texts live with the workloads.
    text: [path.join(userDataDir(env), 'workloads'), ...(config.roots?.workloads ?? [])],
    // Exported runs to import: <data>/results and the folders the config names.
    results: [path.join(userDataDir(env), 'results'), ...(config.roots?.results ?? [])],
  };
  const keys = config.endpointKeys ?? [];
  const endpoints = [...(config.roots?.endpoints ?? []), ...keys.map((entry) => entry.endpoint)];
  return {
    face: 'rpc',
    paths: rootedPaths(roots),
    checkEndpoint(url) {
      // A page holding the UI must not turn the service into a client of any host it can reach
      // (a cloud metadata address, another machine's admin port): this machine, and what the config names.
      if (isLoopbackUrl(url) || endpoints.some((endpoint) => endpointCovers(endpoint, url))) return;
      throw new AppError(
        ErrorCode.Forbidden,
        `${url} is not an endpoint this interface may send requests to (this machine's loopback${endpoints.length ? `, ${endpoints.join(', ')}` : ''}). ` +
          'Add it to "roots.endpoints" in the config file, or use the CLI, which may name any endpoint.',
        { endpoints },
      );
    },
    endpointHeaders(url, keyVariable) {
      // Naming a variable would let a request send any of the user's secrets to a host of its choosing.
      if (keyVariable)
        throw new AppError(
          ErrorCode.Forbidden,
          'a request over RPC cannot name an API-key variable; list the endpoint under "endpointKeys" in the config file',
        );
      return configuredEndpointHeaders(url, keys, env);
    },
  };
}

/** The person at the shell: any path, and the key in the variable they name (INFERLAB_API_KEY by default) to the endpoint they named. */
export function shellAccess(env: NodeJS.ProcessEnv = process.env): ServiceAccess {
  return {
    face: 'shell',
    paths: unrestrictedPaths,
    checkEndpoint: () => undefined,
    endpointHeaders: (_url, keyVariable) => endpointHeaders(env, keyVariable || 'INFERLAB_API_KEY'),
  };
}

/** A model reference checked against the face's roots before anything is read from it. */
export async function resolveModelWithin(access: ServiceAccess, ref: string): Promise<string> {
  if (isDemoRef(ref)) return resolveModelRef(ref);
  return resolveModelRef(await access.paths.check(ref, 'model'));
}

/**
 * A profile whose draft model, LoRA adapter and image projector are held to the same roots as the served model: a
 * profile must not lead the server to a file outside them.
 */
/** Each adapter of a profile's list held to the roots, its scale kept. */
async function adaptersWithin(setting: string, within: (ref: string) => Promise<string | null | undefined>): Promise<string> {
  const entries = await Promise.all(
    loraAdapterEntries(setting).map(async ({ file, scale }) => `${await within(file)}${scale === undefined ? '' : `@${scale}`}`),
  );
  return entries.join(',');
}

export async function profileWithin(access: ServiceAccess, profile: ServerProfile): Promise<ServerProfile> {
  const within = async (ref: string | null | undefined) => (!ref || isDemoRef(ref) ? ref : access.paths.check(ref, 'model'));
  return {
    ...profile,
    draftModel: (await within(profile.draftModel)) ?? null,
    ...(profile.loraAdapter ? { loraAdapter: await adaptersWithin(profile.loraAdapter, within) } : {}),
    ...(profile.projector ? { projector: await within(profile.projector) } : {}),
  };
}

export async function workloadPathWithin(access: ServiceAccess, nameOrFile: string): Promise<string> {
  return access.paths.check(await workloadPath(nameOrFile), 'workload');
}

/**
 * The files a workload's generators read (a ShareGPT import, a trace), held to the same roots
 * as the workload itself: a workload inside the roots must not lead a request to a file outside
 * them. The definition comes back with each such file replaced by the real location that was
 * checked, so the reader opens what was checked: resolving the written name again later would
 * follow a link swapped in after the check.
 */
export async function generatorFilesWithin(access: ServiceAccess, def: WorkloadDef, workloadFile: string): Promise<WorkloadDef> {
  const within = (file: string) => access.paths.check(path.resolve(path.dirname(workloadFile), file), 'workload');
  const imagesWithin = (images: readonly ImageDef[]) =>
    Promise.all(images.map(async (image) => ('file' in image ? { file: await within(image.file) } : image)));
  const groups: WorkloadDef['groups'] = [];
  for (const group of def.groups) {
    const generator = group.generate;
    if (generator && 'sharegpt' in generator)
      groups.push({ ...group, generate: { sharegpt: { ...generator.sharegpt, file: await within(generator.sharegpt.file) } } });
    else if (generator && 'trace' in generator)
      groups.push({ ...group, generate: { trace: { ...generator.trace, file: await within(generator.trace.file) } } });
    else groups.push(group);
  }
  // An item's image files are read and sent to the server: held to the same roots.
  const withImages = await Promise.all(
    groups.map(async (group) =>
      group.items?.some((item) => item.images?.some((image) => 'file' in image))
        ? {
            ...group,
            items: await Promise.all(
              group.items.map(async (item) => ({ ...item, ...(item.images ? { images: await imagesWithin(item.images) } : {}) })),
            ),
          }
        : group,
    ),
  );
  return { ...def, groups: withImages };
}

/**
 * Where a Parquet export goes: the folder named, checked against the results roots, or a new
 * folder under the first of them, named by the time (the shell always names one).
 */
export async function parquetFolder(paths: PathPolicy, folder: string | null, now = new Date()): Promise<string> {
  if (folder !== null) return paths.check(folder, 'results');
  const root = paths.roots('results')[0];
  if (root === undefined) throw new AppError(ErrorCode.InvalidInput, 'name the folder to write the Parquet files into (--out DIR)');
  return paths.check(path.join(root, `parquet-${now.toISOString().replace(/[:.]/g, '-')}`), 'results');
}
