import type { RemoteError } from '../api/client';

/** An error shown where it happened, with its code and what to do. */
export function ErrorBox({ error }: { error: Error | RemoteError | null }) {
  if (!error) return null;
  const code = 'code' in error ? (error as RemoteError).code : null;
  return (
    <div role="alert" className="error-box">
      {code && <span className="badge badge-missing">{code}</span>} <pre>{error.message}</pre>
    </div>
  );
}
