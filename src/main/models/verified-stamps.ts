import type fs from 'node:fs';
import path from 'node:path';
import { rememberDigest, stampedDigest } from '../core/file-stamps';

/**
 * Demo files already checked against the sha256 their manifest records, stamped in the demo folder
 * itself: a demo model is read whole on every server start otherwise (an experiment starts one per
 * condition, the cold-process condition one per request group).
 */
const STAMPS_NAME = 'demo-models.verified.json';

/** Whether `fileName` in `dir`, as it is now (`stat`), was found to have `sha256` since its last change. */
export function verifiedSince(dir: string, fileName: string, stat: fs.Stats, sha256: string): boolean {
  return stampedDigest(path.join(dir, STAMPS_NAME), fileName, stat) === sha256;
}

/** Remembers that `fileName`, stat'ed as `before` and hashed from `hashStartedAt` on, has `sha256` (see core/file-stamps). */
export function rememberVerified(dir: string, fileName: string, before: fs.Stats, sha256: string, hashStartedAt: number): void {
  rememberDigest(path.join(dir, STAMPS_NAME), fileName, path.join(dir, fileName), before, sha256, hashStartedAt);
}
