import type { AppEvents, AppServices, EventName, RpcResponse, ServiceName } from '../../../shared/contract';
import type { ErrorCode } from '../../../shared/errors';

/** What a transport must offer: the WebSocket to the local service, in a browser and in the desktop window alike. */
export interface RpcBridge {
  call(service: string, method: string, args: unknown[]): Promise<RpcResponse>;
  /** Listens to one event; the server sends a connection only the events it has listeners for. */
  on(name: EventName, listener: (payload: unknown) => void): () => void;
}

/**
 * Subscribes to one event, with its payload typed by the contract's event map: the one place
 * the bridge's untyped payloads become typed ones.
 */
export function subscribe<E extends EventName>(bridge: RpcBridge, name: E, listener: (payload: AppEvents[E]) => void): () => void {
  return bridge.on(name, (payload) => listener(payload as AppEvents[E]));
}

/** An error raised in main, rebuilt on this side with its code and details. */
export class RemoteError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'RemoteError';
  }
}

/** A typed proxy: `client.doctor.report()` becomes one call over the bridge. */
export function createClient(bridge: RpcBridge): AppServices {
  return new Proxy({} as AppServices, {
    get: (_target, service: string) =>
      new Proxy(
        {},
        {
          get:
            (_inner, method: string) =>
            async (...args: unknown[]) => {
              const response = await bridge.call(service as ServiceName, method, args);
              if (response.ok) return response.result;
              throw new RemoteError(response.error.code, response.error.message, response.error.details);
            },
        },
      ),
  });
}
