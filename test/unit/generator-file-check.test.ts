import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rootedPaths } from '../../src/main/core/path-policy';
import type { ServiceAccess } from '../../src/main/services/access';
import { checkRunSpec } from '../../src/main/services/run-spec';
import { estimatingTokenCounter } from '../../src/main/workload/token-counter';
import { resolveWorkload } from '../../src/main/workload/resolve-workload';
import { demoRunSpec } from '../support/specs';
import { useTempDirs } from '../support/temp';

/**
 * A workload's ShareGPT or trace file is held to the workload roots by its real location. The
 * run must then read that location: read by its written name again, a link swapped after the
 * check (by anyone who can write in a workload root) would lead the read out of the roots.
 */
const tempDir = useTempDirs();
const sharegpt = (text: string) => JSON.stringify([{ conversations: [{ from: 'human', value: text }] }]);

function rpcAccessTo(root: string): ServiceAccess {
  return {
    face: 'rpc',
    paths: rootedPaths({ workload: [root], model: [], text: [], results: [] }),
    checkEndpoint: () => undefined,
    endpointHeaders: () => ({}),
  };
}

describe('a generator file checked against the workload roots', () => {
  it('is read where it was checked, not wherever its name points after the check', async () => {
    const root = tempDir();
    const outside = tempDir();
    fs.writeFileSync(path.join(root, 'checked.json'), sharegpt('LEGIT-PROMPT'));
    fs.writeFileSync(path.join(outside, 'secret.json'), sharegpt('SECRET-MARKER'));
    fs.symlinkSync(path.join(root, 'checked.json'), path.join(root, 'data.json'));
    fs.writeFileSync(path.join(root, 'trace.jsonl'), '');
    const workload = path.join(root, 'w.yaml');
    fs.writeFileSync(
      workload,
      'name: w\ngroups:\n  - name: g\n    generate: { sharegpt: { file: data.json } }\n  - name: t\n    generate: { trace: { file: trace.jsonl } }\n',
    );

    const checked = await checkRunSpec(demoRunSpec({ workload, model: null, endpoint: 'http://127.0.0.1:9' }), rpcAccessTo(root));
    // Swapped after the check: the name in the workload now leads out of the roots.
    fs.rmSync(path.join(root, 'data.json'));
    fs.symlinkSync(path.join(outside, 'secret.json'), path.join(root, 'data.json'));

    const { def, file } = checked.request.workload;
    const resolved = await resolveWorkload({ ...def, groups: def.groups.slice(0, 1) }, file, estimatingTokenCounter);
    const sent = JSON.stringify(resolved.groups[0]!.items.map((item) => item.messages));
    expect(sent).not.toContain('SECRET-MARKER');
    expect(sent).toContain('LEGIT-PROMPT');
    // Both kinds of generator file are handed on by the real location checked.
    expect(def.groups.map((group) => group.generate)).toEqual([
      { sharegpt: { file: fs.realpathSync(path.join(root, 'checked.json')) } },
      { trace: { file: fs.realpathSync(path.join(root, 'trace.jsonl')) } },
    ]);
  });
});
