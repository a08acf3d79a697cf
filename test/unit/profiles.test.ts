import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildLlamaServerArgs, defaultProfile } from '../../src/main/engines/llamacpp/launch-args';
import { classifyFault, parseLogFacts } from '../../src/main/engines/llamacpp/log-facts';
import { applySettings, SAVED_PROFILE_RULES, validateProfile } from '../../src/main/engines/llamacpp/profile-rules';
import { ProfileStore } from '../../src/main/store/profile-store';
import { openDatabase } from '../../src/main/store/database';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('server profiles', () => {
  it('accepts the default profile and passes every tuning flag explicitly', () => {
    const profile = defaultProfile();
    expect(validateProfile(profile, { trainedContext: 4096 })).toEqual([]);
    const args = buildLlamaServerArgs('/m.gguf', 8080, profile);
    for (const flag of [
      '-m',
      '-c',
      '-np',
      '-b',
      '-ub',
      '-ngl',
      '-fa',
      '-ctk',
      '-ctv',
      '-t',
      '--cache-ram',
      '--cache-reuse',
      '--metrics',
      '--slots',
    ])
      expect(args).toContain(flag);
    expect(args.slice(0, 4)).toEqual(['--host', '127.0.0.1', '--port', '8080']);
  });

  it.each([
    [{ cacheTypeV: 'q4_0', flashAttention: 'auto' as const }, 'cacheTypeV', /needs flashAttention on/],
    [{ ubatchSize: 4096, batchSize: 2048 }, 'ubatchSize', /cannot exceed batchSize/],
    [{ contextSize: 16384 }, 'contextSize', /exceeds the model's trained context \(4096\)/],
    [{ parallelSlots: 0 }, 'parallelSlots', /integer from 1 to 512, got 0/],
    [{ cacheTypeK: 'q3_x' }, 'cacheTypeK', /must be one of/],
    [{ flashAttention: 'maybe' as never }, 'flashAttention', /on, off or auto/],
    [{ extraFlags: ['-c', '8192'] }, 'extraFlags', /-c is set by Infer Lab; use the profile field contextSize/],
    [{ extraFlags: ['mlock'] }, 'extraFlags', /expected a flag, got "mlock"/],
    [{ threads: 1.5 }, 'threads', /integer from 1 to 4096, got 1.5/],
  ])('rejects %j naming the field', (change, field, message) => {
    const problems = validateProfile({ ...defaultProfile(), ...change }, { trainedContext: 4096 });
    expect(problems.find((problem) => problem.field === field)?.message).toMatch(message);
  });

  it.each([
    [['--log-file', '/home/u/.ssh/authorized_keys'], /--log-file is not allowed: Infer Lab sets the server's logging itself/],
    [['-mu', 'https://example.com/other.gguf'], /-mu is not allowed: it changes which model is served/],
    [['-hf', 'org/model'], /-hf is not allowed: it changes which model is served/],
    [['--lora', '/tmp/adapter.gguf'], /--lora is set by Infer Lab; use the profile field loraAdapter/],
    [['--lora-scaled', '/tmp/adapter.gguf:0.5'], /--lora-scaled is set by Infer Lab; use the profile field loraAdapter/],
    [['--rpc', '10.0.0.1:50052'], /--rpc is not allowed: it changes how the server is reached/],
    [['--chat-template-file', '/tmp/t.jinja'], /--chat-template-file is not allowed: it changes the chat template/],
    [['--api-key', 'k'], /--api-key is not allowed/],
    [['--hf-token=secret'], /--hf-token is not allowed/],
    [['--definitely-not-a-flag'], /not a tuning flag Infer Lab passes to llama-server/],
    [['--threads-batch', 'many'], /--threads-batch takes a whole number from 1 to 4096, got "many"/],
    [['--numa'], /--numa needs a value/],
    [['--mlock=1'], /--mlock takes no value/],
    [['--override-tensor', 'x=CPU;rm -rf /'], /--override-tensor takes PATTERN=BUFFER_TYPE pairs/],
  ])('refuses extra flags %j with the reason', (extraFlags, message) => {
    const problems = validateProfile({ ...defaultProfile(), extraFlags }).filter((problem) => problem.field === 'extraFlags');
    expect(problems).toHaveLength(1);
    expect(problems[0]!.message).toMatch(message);
  });

  it('passes typed tuning flags, in both spellings and with negative values', () => {
    const extraFlags = [
      '--mlock',
      '--no-mmap',
      '-tb',
      '2',
      '--numa=distribute',
      '--keep',
      '-1',
      '--seed',
      '42',
      '-ot',
      'blk\\.[0-9]+\\.ffn_.*=CPU',
      '--spec-type',
      'ngram-mod',
      '--temp',
      '0.7',
      '-dev',
      'none',
    ];
    expect(validateProfile({ ...defaultProfile(), extraFlags })).toEqual([]);
  });

  it('applies --set by field name or llama-server flag alias, and rejects unknown or malformed settings', () => {
    const profile = applySettings(defaultProfile(), [
      'c=2048',
      'np=2',
      'flashAttention=on',
      'ctv=q8_0',
      'allowContextOverTrained=true',
      'extraFlags=--mlock --no-mmap',
    ]);
    expect(profile).toMatchObject({
      contextSize: 2048,
      parallelSlots: 2,
      flashAttention: 'on',
      cacheTypeV: 'q8_0',
      allowContextOverTrained: true,
      extraFlags: ['--mlock', '--no-mmap'],
    });
    expect(() => applySettings(defaultProfile(), ['warp=9'])).toThrow(/Unknown server setting "warp"/);
    expect(() => applySettings(defaultProfile(), ['c=big'])).toThrow(/--set contextSize expects a number, got "big"/);
    expect(() => applySettings(defaultProfile(), ['c'])).toThrow(/expects FIELD=VALUE/);
  });

  it('saves, lists and deletes named profiles in SQLite; default always exists', () => {
    const store = new ProfileStore(openDatabase(path.join(tempDir(), 'p.db')), SAVED_PROFILE_RULES);
    expect(store.list().map((profile) => profile.name)).toEqual(['default']);
    store.save({ ...defaultProfile('two-slots'), parallelSlots: 2 });
    expect(store.get('two-slots').parallelSlots).toBe(2);
    expect(store.list().map((profile) => profile.name)).toEqual(['default', 'two-slots']);
    expect(() => store.save({ ...defaultProfile('bad'), ubatchSize: 9999, batchSize: 1 })).toThrow(
      /Server profile "bad" is not valid:\n {2}ubatchSize/,
    );
    expect(() => store.get('nope')).toThrow(/No server profile named "nope"/);
    expect(store.delete('two-slots')).toBe(true);
    expect(() => store.delete('default')).toThrow(/cannot be deleted/);
  });
});

describe('llama-server log reading', () => {
  it('reads buffer sizes, offloaded layers and contexts from the load log', () => {
    const facts = parseLogFacts([
      '0.00.091.844 I print_info: n_ctx_train           = 4096',
      '0.00.094.849 I load_tensors: offloaded 33/33 layers to GPU',
      '0.00.094.849 I load_tensors:   CPU_Mapped model buffer size =    29.37 MiB',
      '0.00.094.850 I load_tensors:        CUDA0 model buffer size =  4096.50 MiB',
      '0.00.095.273 I llama_context: n_ctx                 = 2048',
      '0.00.095.508 I llama_kv_cache:        CUDA0 KV buffer size =     8.00 MiB',
      '0.00.100.493 I sched_reserve:        CUDA0 compute buffer size =    14.01 MiB',
      '0.00.980.861 I srv  llama_server: listening on http://127.0.0.1:18081',
    ]);
    expect(facts).toEqual({
      layersOffloaded: { offloaded: 33, total: 33 },
      buffersMib: { 'CPU_Mapped model': 29.37, 'CUDA0 model': 4096.5, 'CUDA0 KV': 8, 'CUDA0 compute': 14.01 },
      trainedContext: 4096,
      contextSize: 2048,
      inputEmbedding: null,
      listening: true,
      listeningOn: '127.0.0.1:18081',
    });
  });

  it.each([
    ['ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9000.00 MiB on device 0: cudaMalloc failed: out of memory', 'out_of_memory'],
    ["start: couldn't bind HTTP server socket, hostname: 127.0.0.1, port: 8080", 'bind_failed'],
    ['llama_server: exiting due to HTTP server error', 'bind_failed'],
    ['error: invalid argument: --bogus', 'unsupported_flag'],
    ["llama_model_load: error loading model: tensor 'x' data is not within the file bounds", 'bad_model_file'],
    ['spawn failed: spawn /x/llama-server ENOENT', 'binary_missing'],
  ])('classifies %j', (line, code) => {
    expect(classifyFault(['some other line', line])?.code).toBe(code);
  });
});
