import { describe, expect, it } from 'vitest';
import type { AppServices, DoctorReport } from '../../src/shared/contract';
import { ErrorCode } from '../../src/shared/errors';
import { AppError } from '../../src/main/core/errors';
import { RpcDispatcher } from '../../src/main/rpc/dispatcher';

const report: DoctorReport = { checks: [], engine: null, gpus: [], databasePath: '/tmp/x.db', demoModels: [] };

function dispatcherWith(reportImpl: () => Promise<DoctorReport>) {
  // Only the doctor service is exercised; the others are never reached by these requests.
  const services = { doctor: { report: reportImpl } } as unknown as AppServices;
  return new RpcDispatcher(services);
}

describe('RPC dispatcher', () => {
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
    [{ service: 'doctor', method: 'report', args: [1] }, /doctor.report takes 0 argument\(s\), got 1/],
    [{ service: 'runs', method: 'get', args: [42] }, /runs.get: argument 1 must be string/],
    [{ service: 'runs', method: 'compare', args: [['a', 7]] }, /runs.compare: argument 1 must be string\[\]/],
    [{ service: 'servers', method: 'start', args: ['demo:q8_0', 'not-an-object'] }, /servers.start: argument 2 must be object/],
  ])('refuses %j at the boundary', async (request, message) => {
    const response = await dispatcherWith(async () => report).dispatch(request);
    expect(response.ok).toBe(false);
    if (!response.ok) {
      expect(response.error.code).toBe(ErrorCode.InvalidInput);
      expect(response.error.message).toMatch(message);
    }
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
