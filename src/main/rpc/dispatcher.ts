import { SERVICE_METHODS, type AppServices, type RpcRequest, type RpcResponse, type ServiceName } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError, toErrorShape } from '../core/errors';
import { checkArguments } from './argument-rules';

function isServiceName(name: string): name is ServiceName {
  return Object.hasOwn(SERVICE_METHODS, name);
}

/**
 * The single place where a request from any transport becomes a service call. Validates
 * the envelope and the method against the contract's allow-list; errors leave as
 * `{code, message, details}` and never as stack traces.
 */
export class RpcDispatcher {
  constructor(private readonly services: AppServices) {}

  async dispatch(raw: unknown): Promise<RpcResponse> {
    try {
      const request = parseRequest(raw);
      if (!isServiceName(request.service)) throw new AppError(ErrorCode.InvalidInput, `Unknown service "${request.service}"`);
      const allowed: readonly string[] = SERVICE_METHODS[request.service];
      if (!allowed.includes(request.method))
        throw new AppError(ErrorCode.InvalidInput, `Unknown method "${request.service}.${request.method}"`);
      checkArguments(request.service, request.method, request.args);
      const service = this.services[request.service] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      const result = await service[request.method]!(...request.args);
      return { ok: true, result };
    } catch (error) {
      return { ok: false, error: toErrorShape(error) };
    }
  }
}

function parseRequest(raw: unknown): RpcRequest {
  if (typeof raw !== 'object' || raw === null) throw new AppError(ErrorCode.InvalidInput, 'RPC request must be an object');
  const { service, method, args } = raw as Record<string, unknown>;
  if (typeof service !== 'string' || typeof method !== 'string')
    throw new AppError(ErrorCode.InvalidInput, 'RPC request needs string "service" and "method"');
  if (args !== undefined && !Array.isArray(args)) throw new AppError(ErrorCode.InvalidInput, 'RPC "args" must be an array');
  return { service, method, args: (args as unknown[] | undefined) ?? [] };
}
