/**
 * Workload texts that cost the parser far more than their size, each under the 8 MiB the
 * editor's RPC accepts (docs/SECURITY.md, "Workload text"). Constructed: the shapes are those an attack would paste, the sizes are
 * chosen by each caller.
 */

/** `[` × n then `]` × n: flow sequences nested n deep (n = 4,194,304 fills 8 MiB). */
export function nestedBrackets(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}

/** Lines of `kN: [`, none closed: each opens a flow sequence inside the last. */
export function unclosedFlowLines(bytes: number): string {
  const lines: string[] = [];
  let length = 0;
  for (let index = 0; length < bytes; index++) {
    const line = `k${index}: [\n`;
    lines.push(line);
    length += line.length;
  }
  return lines.join('');
}

/** A valid workload whose one acceptance check is a JSON Schema with `properties` named p0…p(n-1). */
export function wideJsonSchema(properties: number): string {
  const fields: string[] = [];
  for (let index = 0; index < properties; index++) fields.push(`"p${index}": { "type": "string", "minLength": 1 }`);
  return `name: wide
groups:
  - name: g
    items:
      - id: a
        prompt: hi
        accept:
          - json_schema: { "type": "object", "properties": { ${fields.join(', ')} } }
`;
}

/** `items` written items, each with one unknown field: one schema error per item. */
export function itemsEachWithOneError(items: number): string {
  const lines = ['name: many', 'groups:', '  - name: g', '    items:'];
  for (let index = 0; index < items; index++) lines.push(`      - { id: i${index}, prompt: hi, colour: red }`);
  return `${lines.join('\n')}\n`;
}

/** `items` ordinary written items: a large workload that is valid. */
export function manyValidItems(items: number): string {
  const lines = ['name: many', 'groups:', '  - name: g', '    items:'];
  for (let index = 0; index < items; index++)
    lines.push(`      - id: i${index}`, `        messages: [{ role: user, content: "Summarize item ${index} in one short sentence." }]`);
  return `${lines.join('\n')}\n`;
}
