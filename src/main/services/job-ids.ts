import crypto from 'node:crypto';

export function newJobId(): string {
  return crypto.randomUUID();
}
