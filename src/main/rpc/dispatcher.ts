import type { AppServices, RpcRequest, RpcResponse, ServiceName } from '../../shared/contract';
import { ErrorCode } from '../../shared/errors';
import { AppError, toErrorShape } from '../core/errors';
import { checkCall } from './argument-validators';

/**
 * The single place where a request from any transport becomes a service call. The envelope,
 * the method and every argument are checked against the contract (`SERVICE_CONTRACT`); errors
 * leave as `{code, message, details}` and never as stack traces.
 */
export class RpcDispatcher {
  constructor(private readonly services: AppServices) {}

  async dispatch(raw: unknown): Promise<RpcResponse> {
    try {
      const request = parseRequest(raw);
      checkCall(request.service, request.method, request.args);
      const service = this.services[request.service as ServiceName] as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
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
