import crypto from 'node:crypto';

export function newJobId(): string {
  return crypto.randomUUID();
}

/** A long operation as the services start it: its id, and its outcome. */
export interface LaunchedJob<T> {
  jobId: string;
  done: Promise<T>;
}

/** For `start` over RPC: the outcome travels as progress events, so nobody awaits it here. */
export function detach<T>(job: LaunchedJob<T>): { jobId: string } {
  job.done.catch(() => undefined);
  return { jobId: job.jobId };
}

/** For in-process callers: the outcome, with the job cancelled when `signal` aborts. */
export async function awaitJob<T>(job: LaunchedJob<T>, cancel: (jobId: string) => void, signal?: AbortSignal): Promise<T> {
  const stop = () => cancel(job.jobId);
  if (signal?.aborted) stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    return await job.done;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}
