import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_CALLS, NOT_ON_THE_CLI } from '../../src/main/cli/command-contract';
import { experimentSpecFromArgs } from '../../src/main/cli/commands/experiment';
import { runSpecFromArgs } from '../../src/main/cli/commands/run';
import { commandHelp, commandTable, helpTopic } from '../../src/main/cli/help';
import { GgmlType, writeGgufFile } from '../../src/main/models/gguf-writer';
import { RUN_USAGE, EXPERIMENT_USAGE } from '../../src/main/cli/usage';
import { contractMethod, SERVICE_CONTRACT } from '../../src/shared/contract/services';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** "command" for a command without subcommands, "command subcommand" for each subcommand. */
function leaves(): string[] {
  return [...commandTable().entries()].flatMap(([command, row]) =>
    row.subcommands.length === 0 ? [command] : row.subcommands.map((subcommand) => `${command} ${subcommand}`),
  );
}

const flagsOf = (usage: string) => [...new Set(usage.match(/--[a-z][a-z0-9-]*/g) ?? [])];

describe('the command table and the service contract', () => {
  it('says for every command and subcommand what it calls, and nothing for commands that do not exist', () => {
    expect(Object.keys(COMMAND_CALLS).sort()).toEqual(leaves().sort());
  });

  it('names only methods the contract declares', () => {
    for (const [command, entry] of Object.entries(COMMAND_CALLS))
      if ('calls' in entry)
        for (const call of entry.calls)
          expect(contractMethod(...(call.split('.') as [string, string])), `${command} → ${call}`).not.toBeNull();
  });

  it('reaches every contract method from the CLI, or says why not', () => {
    const called = new Set(Object.values(COMMAND_CALLS).flatMap((entry) => ('calls' in entry ? entry.calls : [])));
    for (const [service, methods] of Object.entries(SERVICE_CONTRACT))
      for (const method of Object.keys(methods)) {
        const name = `${service}.${method}` as keyof typeof NOT_ON_THE_CLI;
        expect(called.has(name) !== name in NOT_ON_THE_CLI, `${name}: called by a command xor listed in NOT_ON_THE_CLI`).toBe(true);
      }
    for (const name of Object.keys(NOT_ON_THE_CLI)) expect(contractMethod(...(name.split('.') as [string, string])), name).not.toBeNull();
  });
});

describe('every flag of run and experiment reaches the spec the UI sends', () => {
  const OUTPUT_FLAGS = ['--db', '--json', '--report', '--help'];

  it('run: each flag changes the spec', () => {
    const base = ['--workload', 'chat-short', '--model', 'demo:q8_0'];
    const open = [...base, '--rate', '2', '--requests', '10'];
    const variants: Record<string, { args: string[]; against?: string[] }> = {
      '--workload': { args: ['--workload', 'long-context', '--model', 'demo:q8_0'] },
      '--model': { args: ['--workload', 'chat-short', '--model', 'demo:f16'] },
      '--endpoint': { args: ['--workload', 'chat-short', '--endpoint', 'http://127.0.0.1:9'] },
      '--concurrency': { args: [...base, '--concurrency', '3'] },
      '--rate': { args: open, against: [...base, '--requests', '10'] },
      '--burstiness': { args: [...open, '--burstiness', '0.5'], against: open },
      '--max-outstanding': { args: [...open, '--max-outstanding', '8'], against: open },
      '--shards': { args: [...open, '--shards', '4'], against: open },
      '--ramp-up': { args: [...open, '--ramp-up', '5'], against: open },
      '--trace': { args: ['--trace', 'a.jsonl', '--model', 'demo:q8_0'], against: ['--trace', 'b.jsonl', '--model', 'demo:q8_0'] },
      '--trace-speed': {
        args: ['--trace', 'a.jsonl', '--model', 'demo:q8_0', '--trace-speed', '2'],
        against: ['--trace', 'a.jsonl', '--model', 'demo:q8_0'],
      },
      '--trace-window': {
        args: ['--trace', 'a.jsonl', '--model', 'demo:q8_0', '--trace-window', '10:20'],
        against: ['--trace', 'a.jsonl', '--model', 'demo:q8_0'],
      },
      '--block-tokens': {
        args: ['--trace', 'a.jsonl', '--model', 'demo:q8_0', '--block-tokens', '256'],
        against: ['--trace', 'a.jsonl', '--model', 'demo:q8_0'],
      },
      '--ramp': { args: [...open, '--ramp-up', '5', '--ramp', 'exponential'], against: [...open, '--ramp-up', '5'] },
      '--requests': { args: [...base, '--requests', '7'] },
      '--duration': { args: [...base, '--duration', '30'] },
      '--warmup': { args: [...base, '--warmup', '2'] },
      '--slo': { args: [...base, '--slo', 'ttft=500'] },
      '--first-token-timeout': { args: [...base, '--first-token-timeout', '5'] },
      '--timeout': { args: [...base, '--timeout', '50'] },
      '--reference': { args: [...base, '--reference', 'abc123'] },
      '--profile': { args: [...base, '--profile', 'long'] },
      '--set': { args: [...base, '--set', 'contextSize=2048'] },
      '--force': { args: [...base, '--force'] },
      '--api-key-env': {
        args: ['--workload', 'chat-short', '--endpoint', 'http://127.0.0.1:9', '--api-key-env', 'MY_KEY'],
        against: ['--workload', 'chat-short', '--endpoint', 'http://127.0.0.1:9'],
      },
      '--metrics-url': {
        args: ['--workload', 'chat-short', '--endpoint', 'http://127.0.0.1:9', '--metrics-url', 'http://127.0.0.1:9/metrics'],
        against: ['--workload', 'chat-short', '--endpoint', 'http://127.0.0.1:9'],
      },
      '--gpu-metrics-url': { args: [...base, '--gpu-metrics-url', 'http://127.0.0.1:9400/metrics'] },
      '--private': { args: [...base, '--private'] },
    };
    const spec = (args: string[]) => runSpecFromArgs(args).spec;
    for (const flag of flagsOf(RUN_USAGE).filter((flag) => !OUTPUT_FLAGS.includes(flag))) {
      const variant = variants[flag];
      expect(variant, `a case for ${flag}`).toBeDefined();
      expect(spec(variant!.args), flag).not.toEqual(spec(variant!.against ?? base));
    }
    expect(runSpecFromArgs([...base, '--db', '/tmp/x.db', '--json']).output).toEqual({ db: '/tmp/x.db', json: true });
  });

  it('experiment: each flag changes the spec', () => {
    const dir = tempDir();
    const [a, b] = ['a.gguf', 'b.gguf'].map((name) => path.join(dir, name));
    // --files reads each header: two minimal valid GGUF files.
    for (const file of [a!, b!]) writeGgufFile(file, [], [{ name: 'x', shape: [1], type: GgmlType.F32, data: () => new Uint8Array(4) }]);
    const quant = ['quant', '--model', 'demo:f16', '--workload', 'chat-short'];
    const warm = ['warmcold', '--model', 'demo:q8_0', '--workload', 'prefix-share'];
    const sweep = ['sweep', '--model', 'demo:q8_0', '--vary', 'parallelSlots=1,2'];
    const capacity = ['capacity', '--model', 'demo:q8_0', '--slo', 'ttft=500'];
    const speculative = ['speculative', '--model', 'demo:f16', '--draft', 'demo:q4_k_m'];
    const kvcache = ['kvcache', '--model', 'demo:q8_0'];
    const adapter = ['adapter', '--model', 'demo:q8_0', '--adapters', 'demo:lora'];
    const variants: Record<string, { args: string[]; against: string[] }> = {
      '--model': { args: ['quant', '--model', 'demo:q8_0', '--workload', 'chat-short'], against: quant },
      '--workload': { args: ['quant', '--model', 'demo:f16', '--workload', 'long-context'], against: quant },
      '--quants': { args: [...quant, '--quants', 'f16,q8_0'], against: quant },
      '--files': { args: ['quant', '--files', `a=${a},b=${b}`, '--workload', 'chat-short'], against: quant },
      '--from': { args: ['quant', '--from', 'hf:demo/Demo-GGUF', '--quants', 'Q8_0,Q4_K_M', '--workload', 'chat-short'], against: quant },
      '--repeats': { args: [...quant, '--repeats', '5'], against: quant },
      '--requests': { args: [...quant, '--requests', '9'], against: quant },
      '--concurrency': { args: [...warm, '--concurrency', '2'], against: warm },
      '--cold-starts': { args: [...warm, '--cold-starts', '2'], against: warm },
      '--cooldown': { args: [...warm, '--cooldown', '30'], against: warm },
      '--skip-cache-reset': { args: [...warm, '--skip-cache-reset'], against: warm },
      '--vary': { args: ['sweep', '--model', 'demo:q8_0', '--vary', 'parallelSlots=1,4'], against: sweep },
      '--load': { args: [...sweep, '--load', 'concurrency=1,4'], against: sweep },
      '--slo': { args: [...sweep, '--slo', 'ttft=400'], against: sweep },
      '--vram-budget': { args: [...quant, '--vram-budget', '8000'], against: quant },
      '--min-agreement': { args: [...quant, '--min-agreement', '0.5'], against: quant },
      '--max-kld': { args: [...quant, '--max-kld', 'off'], against: quant },
      '--acceptance-alpha': { args: [...quant, '--acceptance-alpha', '0.1'], against: quant },
      '--min-acceptance': { args: [...quant, '--min-acceptance', '0.9'], against: quant },
      '--objective': { args: [...quant, '--objective', 'tpot'], against: quant },
      '--kld-text': { args: [...quant, '--kld-text', '/tmp/eval.txt'], against: quant },
      '--max-answer-tokens': { args: [...quant, '--max-answer-tokens', '16'], against: quant },
      '--profile': { args: [...quant, '--profile', 'long'], against: quant },
      '--set': { args: [...quant, '--set', 'contextSize=2048'], against: quant },
      '--percentile': { args: [...capacity, '--percentile', '99'], against: capacity },
      '--by': { args: [...capacity, '--by', 'concurrency'], against: capacity },
      '--start': { args: [...capacity, '--start', '4'], against: capacity },
      '--max-load': { args: [...capacity, '--max-load', '64'], against: capacity },
      '--keep-cache': { args: [...capacity, '--keep-cache'], against: capacity },
      '--draft': { args: ['speculative', '--model', 'demo:f16', '--draft', 'demo:q8_0'], against: speculative },
      '--draft-max': { args: [...speculative, '--draft-max', '4'], against: speculative },
      '--types': { args: [...kvcache, '--types', 'f16,q4_0'], against: kvcache },
      '--ctx': { args: [...kvcache, '--ctx', '8192'], against: kvcache },
      '--adapters': { args: [...adapter.slice(0, 3), '--adapters', 'demo:lora@0.5'], against: adapter },
      '--serving': { args: [...adapter, '--serving', 'both'], against: adapter },
      '--fixed': { args: [...quant, '--fixed'], against: quant },
    };
    // --from names where the files come from; they join the spec once pulled.
    const spec = (args: string[]) => {
      const { spec: parsed, fromHub } = experimentSpecFromArgs(args);
      return { parsed, fromHub };
    };
    for (const flag of flagsOf(EXPERIMENT_USAGE).filter((flag) => !OUTPUT_FLAGS.includes(flag))) {
      const variant = variants[flag];
      expect(variant, `a case for ${flag}`).toBeDefined();
      expect(spec(variant!.args), flag).not.toEqual(spec(variant!.against));
    }
    // A spec carries its own kind's fields only: a flag that sets another kind's field is refused by name.
    expect(() => experimentSpecFromArgs([...sweep, '--cold-starts', '2'])).toThrow(/--cold-starts is for experiment warmcold only/);
    // A flag two kinds take is refused for a third naming both, and taken by each of its own.
    expect(() => experimentSpecFromArgs([...capacity, '--fixed'])).toThrow(
      /--fixed is for experiment quant, warmcold, sweep, speculative, kvcache and adapter only/,
    );
    expect(experimentSpecFromArgs([...speculative, '--fixed']).spec).toMatchObject({ fixed: true });
    expect(experimentSpecFromArgs([...sweep, '--fixed']).spec).toMatchObject({ fixed: true });
    expect(experimentSpecFromArgs([...warm, '--fixed']).spec).toMatchObject({ fixed: true });
    expect(experimentSpecFromArgs([...quant, '--fixed']).spec).toMatchObject({ fixed: true });
    expect(() => experimentSpecFromArgs([...warm, '--kld-text', '/tmp/eval.txt'])).toThrow(
      /--kld-text is for experiment quant, kvcache and adapter only/,
    );
    expect(experimentSpecFromArgs([...kvcache, '--kld-text', '/tmp/eval.txt']).spec).toMatchObject({ kldTextFile: '/tmp/eval.txt' });
    expect(Object.keys(experimentSpecFromArgs(warm).spec)).not.toContain('quants');
    expect(experimentSpecFromArgs([...quant, '--db', '/tmp/x.db', '--json', '--report', 'r.html']).output).toEqual({
      db: '/tmp/x.db',
      json: true,
      report: 'r.html',
    });
  });
});

describe('an experiment kind speaks of itself', () => {
  it("its help and its usage errors show that kind's usage, and the hint names its own help", () => {
    const adapterHelp = commandHelp('experiment', 'adapter')!;
    expect(adapterHelp).toMatch(/^Usage: inferlab experiment adapter --model MODEL --adapters /);
    // Its gate flags and the shared ones, no other kind's lines.
    expect(adapterHelp).toContain('[--vram-budget MIB]');
    expect(adapterHelp).toContain('common: [--max-answer-tokens N]');
    expect(adapterHelp).not.toContain('inferlab experiment quant');
    expect(commandHelp('experiment', 'sweep')).not.toContain('[--vram-budget MIB]');
    expect(commandHelp('experiment', undefined)).toContain('inferlab experiment quant');
    expect(() => experimentSpecFromArgs(['adapter', '--model', 'demo:q8_0'])).toThrow(
      /needs --adapters [^\n]*\n\nUsage: inferlab experiment adapter [^]*common: /,
    );
    let message = '';
    try {
      experimentSpecFromArgs(['adapter', '--model', 'demo:q8_0']);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toContain('inferlab experiment quant');
    expect(helpTopic('experiment', 'adapter')).toBe('experiment adapter');
    expect(helpTopic('experiment', 'nope')).toBe('experiment');
    expect(helpTopic('run', '--model')).toBe('run');
  });
});
