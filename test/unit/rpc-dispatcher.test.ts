import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { SERVICE_CONTRACT, type MethodDefinition } from '../../src/shared/contract/services';
import type { AppServices, DoctorReport, ServerProfile, StartExperimentSpec, StartRunSpec } from '../../src/shared/contract';
import { ErrorCode } from '../../src/shared/errors';
import { AppError } from '../../src/main/core/errors';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';
import { demoRunSpec } from '../support/specs';

const report: DoctorReport = { checks: [], engine: null, gpus: [], databasePath: '/tmp/x.db', demoModels: [] };
const runSpec: StartRunSpec = demoRunSpec();
const experimentSpec: StartExperimentSpec = {
  kind: 'quant',
  model: 'demo:f16',
  quants: ['f16', 'q8_0'],
  workload: 'chat-short',
  repeats: 2,
  requestsPerWindow: null,
};
const profile: ServerProfile = {
  name: 'p',
  contextSize: 4096,
  parallelSlots: 1,
  batchSize: 512,
  ubatchSize: 512,
  gpuLayers: 999,
  flashAttention: 'auto',
  cacheTypeK: 'f16',
  cacheTypeV: 'f16',
  threads: 2,
  cacheRamMib: 0,
  cacheReuse: 0,
  allowContextOverTrained: false,
  draftModel: null,
  draftMax: 16,
  draftMin: 0,
  draftPMin: 0.75,
  draftGpuLayers: 999,
  extraFlags: [],
};

function dispatcherWith(reportImpl: () => Promise<DoctorReport>) {
  // Only the doctor service is exercised; the others are never reached by these requests.
  const services = { doctor: { report: reportImpl } } as unknown as AppServices;
  return new RpcDispatcher(services);
}

describe('RPC dispatcher', () => {
  // The dispatcher compiles these without checking them against the meta-schema (that cost a user's first call
  // 90 ms), so they are checked here.
  it('has argument schemas that are valid JSON Schema, every one', () => {
    const checker = new Ajv({ strict: false, discriminator: true });
    const problems: string[] = [];
    const check = (where: string, schema: unknown) => {
      if (!checker.validateSchema(schema as object)) problems.push(`${where}: ${checker.errorsText(checker.errors)}`);
    };
    let checked = 0;
    for (const [service, methods] of Object.entries(SERVICE_CONTRACT))
      for (const [name, definition] of Object.entries(methods as Record<string, MethodDefinition>))
        definition.args.forEach((argument, index) => {
          check(`${service}.${name} argument ${index + 1}`, argument.schema);
          checked += 1;
        });
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(40);
    // The same check refuses a schema with a misspelt type.
    check('a misspelt type', { type: 'objct' });
    expect(problems).toEqual([expect.stringContaining('a misspelt type: data/type must be equal to one of the allowed values')]);
  });

  it('calls an allow-listed method and wraps the result', async () => {
    const response = await dispatcherWith(async () => report).dispatch({ service: 'doctor', method: 'report', args: [] });
    expect(response).toEqual({ ok: true, result: report });
  });

  it.each([
    [null, /must be an object/],
    ['doctor.report', /must be an object/],
    [{ service: 'doctor' }, /needs string "service" and "method"/],
    [{ service: 'doctor', method: 'report', args: 'x' }, /"args" must be an array/],
    [{ service: 'nope', method: 'report' }, /Unknown service "nope"/],
    [{ service: '__proto__', method: 'toString' }, /Unknown service/],
    [{ service: 'doctor', method: 'constructor' }, /Unknown method "doctor.constructor"/],
    [{ service: 'doctor', method: 'toString' }, /Unknown method/],
    [{ service: 'doctor', method: 'report', args: [1] }, /doctor.report takes no arguments, got 1 argument/],
    [{ service: 'runs', method: 'get', args: [42] }, /runs.get: runId must be string/],
    [{ service: 'runs', method: 'get', args: ['x'.repeat(600)] }, /runs.get: runId must NOT have more than 512 characters/],
    [{ service: 'runs', method: 'compare', args: [['a', 7]] }, /runs.compare: runIds.1 must be string/],
    [{ service: 'runs', method: 'history', args: [{ metric: 'tpot_ms:p50', build: 'x' }] }, /runs.history: query has no field "build"/],
    [{ service: 'runs', method: 'history', args: [{ metric: 'x'.repeat(65) }] }, /runs.history: query.metric must NOT have more than 64/],
    [{ service: 'runs', method: 'history', args: [{ metric: 'tpot_ms:p50', key: 'ZZ' }] }, /runs.history: query.key must match pattern/],
    [{ service: 'servers', method: 'start', args: ['demo:q8_0', 'not-an-object'] }, /servers.start: profile must be object/],
    [{ service: 'servers', method: 'start', args: ['demo:q8_0'] }, /servers.start takes modelRef, profile, \[options\], got 1/],
    [{ service: 'runs', method: 'start', args: [{ ...runSpec, concurrancy: 4 }] }, /runs.start: spec has no field "concurrancy"/],
    [{ service: 'runs', method: 'start', args: [{ ...runSpec, private: undefined }] }, /runs.start: spec needs the field "private"/],
    [{ service: 'runs', method: 'start', args: [{ ...runSpec, rate: '2' }] }, /runs.start: spec.rate must be number or null/],
    [{ service: 'runs', method: 'start', args: [{ ...runSpec, slo: { ttft: 500 } }] }, /runs.start: spec.slo has no field "ttft"/],
    [
      { service: 'experiments', method: 'start', args: [{ ...experimentSpec, constraints: { objective: 'speed' } }] },
      /experiments.start: spec.constraints needs the field "vramBudgetMib"/,
    ],
    [
      { service: 'servers', method: 'saveProfile', args: [{ ...profile, flashAttention: 'maybe' }] },
      /servers.saveProfile: profile.flashAttention must be "on" or "off" or "auto"/,
    ],
    [{ service: 'servers', method: 'saveProfile', args: [{ ...profile, contextSize: 4096.5 }] }, /profile.contextSize must be integer/],
    [{ service: 'models', method: 'scan', args: [null, { hash: true, follow: true }] }, /models.scan: options has no field "follow"/],
  ])('refuses %j at the boundary', async (request, message) => {
    const response = await dispatcherWith(async () => report).dispatch(request);
    expect(response.ok).toBe(false);
    if (!response.ok) {
      expect(response.error.code).toBe(ErrorCode.InvalidInput);
      expect(response.error.message).toMatch(message);
    }
  });

  it('passes calls that match the contract on to the service, optional arguments absent or null', async () => {
    const calls: unknown[][] = [];
    const record = async (...args: unknown[]) => {
      calls.push(args);
      return { jobId: 'j' };
    };
    const services = { runs: { start: record }, models: { scan: record }, servers: { start: record } } as unknown as AppServices;
    const dispatcher = new RpcDispatcher(services);
    const fullSpec: StartRunSpec = { ...runSpec, slo: { ttft_ms: 500 }, burstiness: null, settings: ['contextSize=2048'], apiKeyEnv: null };
    for (const request of [
      { service: 'runs', method: 'start', args: [fullSpec] },
      { service: 'models', method: 'scan', args: [] },
      { service: 'models', method: 'scan', args: [null, null] },
      { service: 'models', method: 'scan', args: [['/models'], { hash: true }] },
      { service: 'servers', method: 'start', args: ['demo:q8_0', profile] },
      { service: 'servers', method: 'start', args: ['demo:q8_0', profile, { force: true }] },
    ])
      expect(await dispatcher.dispatch(request), JSON.stringify(request)).toEqual({ ok: true, result: { jobId: 'j' } });
    expect(calls[0]).toEqual([fullSpec]);
  });

  it('returns service errors as {code, message, details} without a stack', async () => {
    const failing = dispatcherWith(async () => {
      throw new AppError(ErrorCode.EngineMissing, 'no engine', { hint: 'setup' });
    });
    expect(await failing.dispatch({ service: 'doctor', method: 'report', args: [] })).toEqual({
      ok: false,
      error: { code: ErrorCode.EngineMissing, message: 'no engine', details: { hint: 'setup' } },
    });
    const crashing = dispatcherWith(async () => {
      throw new TypeError('boom');
    });
    expect(await crashing.dispatch({ service: 'doctor', method: 'report' })).toEqual({
      ok: false,
      error: { code: ErrorCode.Internal, message: 'boom' },
    });
  });
});
