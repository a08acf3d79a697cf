import { setTimeout as delay } from 'node:timers/promises';
import { TelemetrySession } from '../../src/main/telemetry/telemetry-session';

type SessionOptions = ConstructorParameters<typeof TelemetrySession>[0];

/**
 * A telemetry session on a clock that starts now, through one measured window of `windowMs`
 * after a baseline of no length, and stopped: what a run does, without the run.
 */
export async function measureOneWindow(options: Omit<SessionOptions, 'clock'>, windowMs: number): Promise<TelemetrySession> {
  const origin = performance.now();
  const session = new TelemetrySession({ clock: () => performance.now() - origin, ...options });
  session.start();
  await session.idleBaseline(0);
  session.markWindowStart();
  await delay(windowMs);
  session.markWindowEnd();
  await session.stop();
  return session;
}
