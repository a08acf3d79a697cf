import { readTextFileCapped } from '../core/read-capped';
import type { ServiceAccess } from './access';

/** The evaluation text a kind with quality gates computes KLD on, when the spec names one: held to the face's roots, read capped. */
export async function readKldText(
  file: string | null | undefined,
  access: ServiceAccess,
): Promise<{ text: string; source: string } | null> {
  if (!file) return null;
  const source = await access.paths.check(file, 'text');
  return { text: await readTextFileCapped(source, 'evaluation text'), source };
}
