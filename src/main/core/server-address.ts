import { ErrorCode } from '../../shared/errors';
import { AppError } from './errors';

/** Where an inference server answers, and what every request to it must carry (its API key, if any). */
export interface ServerAddress {
  baseUrl: string;
  headers: Readonly<Record<string, string>>;
}

/** POSTs JSON to one of the server's routes and reads its JSON answer; a non-2xx answer is an error naming the route and status. */
export async function postToServer<T>(
  server: ServerAddress,
  route: string,
  body: unknown,
  options: { timeoutMs: number; signal?: AbortSignal },
): Promise<T> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const response = await fetch(`${server.baseUrl}${route}`, {
    method: 'POST',
    headers: { ...server.headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
  });
  if (!response.ok)
    throw new AppError(ErrorCode.RequestFailed, `${route} answered HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
  return (await response.json()) as T;
}
