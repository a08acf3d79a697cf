import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandTable, completionScript } from '../../src/main/cli/help';
import { projectRoot } from '../../src/main/core/paths';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();
const usage = fs.readFileSync(path.join(projectRoot(), 'docs', 'USAGE.md'), 'utf8');
const commandsBlock = /## Commands\n\n```\n([\s\S]*?)```/.exec(usage)![1]!;

describe("docs/USAGE.md's command list and the CLI's command table agree", () => {
  const table = commandTable();

  it('lists every command, and no command the CLI lacks', () => {
    const listed = new Set(
      [...commandsBlock.matchAll(/(?:\.\/bin\/inferlab|\|)\s+([a-z]+)\b/g)].map((match) => match[1]!).filter((word) => word !== 'npm'),
    );
    for (const command of table.keys()) expect(listed, command).toContain(command);
    for (const command of listed) if (!['list', 'show'].includes(command)) expect([...table.keys(), 'help'], command).toContain(command);
  });

  it('names only flags the command takes', () => {
    for (const line of commandsBlock.split('\n').filter((text) => text.startsWith('./bin/inferlab '))) {
      const command = line.split(/\s+/)[1]!;
      const flags = table.get(command)?.flags ?? [];
      for (const flag of line.match(/--[a-z][a-z0-9-]*/g) ?? [])
        if (flag !== '--version') expect(flags, `${command} ${flag}`).toContain(flag);
    }
  });
});

describe('shell completion from the command table', () => {
  function complete(words: string[]): string[] {
    const script = path.join(tempDir(), 'inferlab.bash');
    fs.writeFileSync(script, completionScript('bash'));
    const line = `source ${script}; COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _inferlab; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const result = spawnSync('bash', ['-c', line], { encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    return result.stdout.split('\n').filter(Boolean).sort();
  }

  it("completes commands, subcommands and each command's own flags in bash", () => {
    expect(complete(['inferlab', 'ru'])).toEqual(['run', 'runs']);
    expect(complete(['inferlab', 'run', '--wo'])).toEqual(['--workload']);
    expect(complete(['inferlab', 'experiment', 'sw'])).toEqual(['sweep']);
    expect(complete(['inferlab', 'runs', ''])).toEqual(expect.arrayContaining(['list', 'show', '--json']));
    expect(complete(['inferlab', 'completion', ''])).toEqual(['bash', 'zsh']);
    expect(complete(['inferlab', 'serve', '--wo'])).toEqual([]);
  });

  it('gives zsh the same script through bashcompinit', () => {
    expect(completionScript('zsh')).toMatch(/^autoload -U \+X bashcompinit && bashcompinit\n/);
    expect(completionScript('zsh')).toContain(completionScript('bash').trimEnd());
  });
});
