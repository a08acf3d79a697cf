import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';
import { listBuiltinWorkloads, workloadPath } from '../../src/main/workload/parse-workload';
import {
  inlineDefinitions,
  loadPrebuiltWorkloadValidator,
  newAjv,
  PREBUILT_VALIDATOR_FILE,
  WORKLOAD_SCHEMA_OPTIONS,
  workloadSchemaText,
} from '../../src/main/workload/workload-validator';
import { workloadValidatorModuleSource } from '../../src/main/workload/workload-validator-source';

const buildDirs: string[] = [];
afterAll(() => buildDirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/**
 * A build folder holding `source` as the prebuilt validator (none where null), and its parser thread's entry URL. Inside the
 * project, as the build writes it: the validator imports Ajv's runtime helpers by package name. A folder per case, since a
 * module once imported stays in this process.
 */
function buildWith(source: string | null): string {
  const dir = fs.mkdtempSync(path.join(projectRoot(), 'node_modules', '.inferlab-validator-'));
  buildDirs.push(dir);
  if (source !== null) fs.writeFileSync(path.join(dir, PREBUILT_VALIDATOR_FILE), source);
  return pathToFileURL(path.join(dir, 'workload-parse-worker.mjs')).href;
}

/** Constructed documents that break the schema in each way it checks: required, type, enum, extra keys, lengths, oneOf. */
async function documents(): Promise<unknown[]> {
  const valid = await Promise.all(listBuiltinWorkloads().map(async (name) => parseYaml(fs.readFileSync(await workloadPath(name), 'utf8'))));
  const broken = valid.flatMap((doc) => {
    const copy = () => structuredClone(doc) as Record<string, unknown> & { groups: Record<string, unknown>[] };
    const withoutName = copy();
    delete withoutName.name;
    const extra = { ...copy(), colour: 'blue' };
    const groupsNotList = { ...copy(), groups: 'chat' };
    const longDescription = { ...copy(), description: '😀'.repeat(2001) };
    const badGroup = copy();
    badGroup.groups[0] = { ...badGroup.groups[0], items: 7, generate: { nonsense: true } };
    return [withoutName, extra, groupsNotList, longDescription, badGroup];
  });
  return [...valid, ...broken];
}

describe('the workload validator the build compiles once', () => {
  it('judges every built-in and every constructed break as the validator compiled at run time does, errors included', async () => {
    const prebuilt = await loadPrebuiltWorkloadValidator(buildWith(workloadValidatorModuleSource()));
    expect(prebuilt).not.toBeNull();
    const compiled = newAjv(WORKLOAD_SCHEMA_OPTIONS).compile(inlineDefinitions(JSON.parse(workloadSchemaText())));
    const docs = await documents();
    let invalid = 0;
    for (const doc of docs) {
      const verdict = compiled(doc);
      expect(prebuilt!(doc)).toBe(verdict);
      expect(prebuilt!.errors ?? null).toEqual(compiled.errors ?? null);
      if (!verdict) invalid++;
    }
    // Every constructed break is caught: the comparison above covered failures, not only passes.
    expect(invalid).toBe(docs.length - listBuiltinWorkloads().length);
  });

  it('is not used when it was built from another schema, or is not there (a source checkout compiles its own)', async () => {
    const schema = JSON.parse(workloadSchemaText()) as { properties: Record<string, unknown> };
    schema.properties.colour = { type: 'string' };
    expect(await loadPrebuiltWorkloadValidator(buildWith(workloadValidatorModuleSource(JSON.stringify(schema))))).toBeNull();
    expect(await loadPrebuiltWorkloadValidator(buildWith(null))).toBeNull();
    expect(
      await loadPrebuiltWorkloadValidator(pathToFileURL(path.join(projectRoot(), 'src/main/workload/workload-parse-worker.ts')).href),
    ).toBeNull();
  });

  it('is what the build placed beside the parser thread of the built CLI', async () => {
    const built = path.join(projectRoot(), 'out', 'cli', PREBUILT_VALIDATOR_FILE);
    if (!fs.existsSync(built)) return;
    expect(fs.readFileSync(built, 'utf8')).toBe(workloadValidatorModuleSource());
  });
});
