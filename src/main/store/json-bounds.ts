/**
 * How deep an imported JSON value may nest. Real records nest a handful of levels; SQLite's
 * JSON functions refuse text nested past 1000, and one such record failed every run list.
 */
export const MAX_IMPORTED_JSON_DEPTH = 64;

/**
 * The most JSON text one free-form field of an imported manifest may take (engine, server,
 * environment, configuration). Real ones are a few kilobytes; a run list reads these columns
 * for every run it shows.
 */
export const MAX_IMPORTED_FIELD_BYTES = 1024 * 1024;

/**
 * Where `value` first nests deeper than `maxDepth` objects and arrays: the keys down to the
 * container that is one level too deep, or null when none is. It never descends past
 * `maxDepth`, so a hostile value cannot exhaust the stack.
 */
export function tooDeepAt(value: unknown, maxDepth: number): (string | number)[] | null {
  if (typeof value !== 'object' || value === null) return null;
  if (maxDepth === 0) return [];
  const entries: Iterable<[string | number, unknown]> = Array.isArray(value) ? value.entries() : Object.entries(value);
  for (const [key, child] of entries) {
    const below = tooDeepAt(child, maxDepth - 1);
    if (below) return [key, ...below];
  }
  return null;
}

/** A path of keys as the import's messages name fields: "engine.a.b[3]". */
export function dottedPath(parts: readonly (string | number)[]): string {
  return parts.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text ? `${text}.${part}` : part), '');
}
