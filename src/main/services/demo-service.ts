import type { DemoService, FirstRequestResult, FirstRequestSpec } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { applySettings } from '../engines/llamacpp/profile-rules';
import { isDemoRef } from '../models/demo-models';
import { profileWithin, resolveModelWithin } from './access';
import type { WorkServiceDeps } from './service-deps';

/** The demo service plus the cancellable form in-process callers get. */
export interface LocalDemoService extends DemoService {
  firstRequestWith(spec: FirstRequestSpec, hooks: { signal?: AbortSignal; onStatus?: (line: string) => void }): Promise<FirstRequestResult>;
}

export function createDemoService(deps: WorkServiceDeps): LocalDemoService {
  async function firstRequestWith(
    spec: FirstRequestSpec,
    hooks: { signal?: AbortSignal; onStatus?: (line: string) => void },
  ): Promise<FirstRequestResult> {
    const maxTokens = spec.maxTokens ?? 64;
    if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > 4096)
      throw new AppError(ErrorCode.InvalidInput, `maxTokens must be a whole number from 1 to 4096, got ${JSON.stringify(spec.maxTokens)}`);
    const modelPath = await resolveModelWithin(deps.access, spec.model);
    const profile = await profileWithin(
      deps.access,
      applySettings(deps.store.profiles.get(spec.profileName || 'default'), spec.settings ?? []),
    );
    const [{ runFirstRequest }, servers, engine] = await Promise.all([import('../demo/first-request'), deps.servers(), deps.engine()]);
    return runFirstRequest({
      engine,
      servers,
      model: { ref: isDemoRef(spec.model) ? spec.model : modelPath, path: modelPath },
      profile,
      store: deps.store.runs,
      maxTokens,
      signal: hooks.signal,
      onStatus: hooks.onStatus,
    });
  }
  return { firstRequest: (spec) => firstRequestWith(spec, {}), firstRequestWith };
}
