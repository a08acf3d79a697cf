import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/main/core/paths';

/** The lint rule that keeps imports pointing down the layers, tried on planted files. */
const root = projectRoot();
const eslint = new ESLint({ cwd: root });

async function layerMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result!.messages.filter((message) => message.ruleId === 'inferlab/layers').map((message) => message.message);
}

describe('npm run lint enforces the layers of src/main', () => {
  it.each([
    [
      'src/main/core/planted.ts',
      "import { rpcAccess } from '../services/access';\nexport const planted = rpcAccess;\n",
      /core \(layer 1\) may not import services \(layer 5\)/,
    ],
    [
      'src/main/store/planted.ts',
      "import { ServerManager } from '../server/server-manager';\nexport const planted = ServerManager;\n",
      /store \(layer 2\) may not import server \(layer 3\)/,
    ],
    [
      'src/main/experiments/planted.ts',
      "export const load = () => import('../cli/usage');\n",
      /experiments \(layer 4\) may not import cli \(layer 6\)/,
    ],
    ['src/shared/planted.ts', "export * from '../main/core/errors';\n", /shared \(layer 0\) may not import core \(layer 1\)/],
    [
      'src/main/gadgets/planted.ts',
      "import { AppError } from '../core/errors';\nexport const planted = AppError;\n",
      /src\/main\/gadgets is in no layer/,
    ],
  ])('refuses %s importing upward', async (file, code, message) => {
    const messages = await layerMessages(file, code);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it('accepts imports within a layer and downward', async () => {
    expect(
      await layerMessages(
        'src/main/services/planted.ts',
        "import { AppError } from '../core/errors';\nimport { ServerManager } from '../server/server-manager';\nexport const planted = [AppError, ServerManager];\n",
      ),
    ).toEqual([]);
    expect(
      await layerMessages(
        'src/main/store/planted.ts',
        "import { describeModel } from '../models/model-library';\nexport const planted = describeModel;\n",
      ),
    ).toEqual([]);
  });

  it('keeps the CLI a face: no values from the store, runner, servers or engines, types and the services only', async () => {
    for (const [specifier, name] of [
      ['../../store/run-store', 'RunStore'],
      ['../../runner/run-workload', 'runWorkload'],
      ['../../server/server-manager', 'ServerManager'],
      ['../../engines/llamacpp/profile-rules', 'applySettings'],
    ]) {
      const messages = await layerMessages(
        'src/main/cli/commands/planted.ts',
        `import { ${name} } from '${specifier}';\nexport const planted = ${name};\n`,
      );
      expect(messages, specifier).toEqual([expect.stringMatching(/the CLI reaches \w+ only through the services/)]);
    }
    expect(
      await layerMessages('src/main/cli/commands/planted.ts', "export const load = () => import('../../runner/run-workload');\n"),
    ).toEqual([expect.stringMatching(/the CLI reaches runner only through the services/)]);
    expect(
      await layerMessages(
        'src/main/cli/commands/planted.ts',
        "import type { RunRow } from '../../store/run-store';\nimport { shellAccess } from '../../services/access';\nexport const planted: [RunRow | null, unknown] = [null, shellAccess];\n",
      ),
    ).toEqual([]);
  });
});
