import path from 'node:path';
import { readUserConfig } from '../core/config';
import { userDataDir } from '../core/paths';
import { rootedPaths, unrestrictedPaths, type PathKind, type PathPolicy } from '../core/path-policy';
import { configuredEndpointHeaders, endpointHeaders } from '../engines/adapters/endpoints';
import { isDemoRef, resolveModelRef } from '../models/demo-models';
import { defaultModelFolders } from '../models/model-library';
import { builtinWorkloadDir, workloadPath } from '../workload/parse-workload';

/** What the face calling the services may reach: which files, and which endpoint gets which key. */
export interface ServiceAccess {
  paths: PathPolicy;
  endpointHeaders(url: string): Record<string, string>;
}

/**
 * Requests over RPC: model files under the usual model folders and `roots.models`, workload
 * files among the built-ins, `<data>/workloads` and `roots.workloads`; API keys only to the
 * endpoints `endpointKeys` names. The roots and keys change only in the config file.
 */
export function rpcAccess(env: NodeJS.ProcessEnv = process.env): ServiceAccess {
  const config = readUserConfig(env);
  const roots: Record<PathKind, string[]> = {
    model: [...defaultModelFolders(env), ...(config.roots?.models ?? [])],
    workload: [builtinWorkloadDir(), path.join(userDataDir(env), 'workloads'), ...(config.roots?.workloads ?? [])],
  };
  const keys = config.endpointKeys ?? [];
  return { paths: rootedPaths(roots), endpointHeaders: (url) => configuredEndpointHeaders(url, keys, env) };
}

/** The person at the shell: any path, and the key in `keyVariable` to the endpoint they named. */
export function shellAccess(keyVariable = 'INFERLAB_API_KEY', env: NodeJS.ProcessEnv = process.env): ServiceAccess {
  return { paths: unrestrictedPaths, endpointHeaders: () => endpointHeaders(env, keyVariable) };
}

/** A model reference checked against the face's roots before anything is read from it. */
export async function resolveModelWithin(access: ServiceAccess, ref: string): Promise<string> {
  if (isDemoRef(ref)) return resolveModelRef(ref);
  return resolveModelRef(access.paths.check(ref, 'model'));
}

export function workloadPathWithin(access: ServiceAccess, nameOrFile: string): string {
  return access.paths.check(workloadPath(nameOrFile), 'workload');
}
