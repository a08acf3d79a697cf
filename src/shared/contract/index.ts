import type { ErrorShape } from '../errors';
import type { DoctorReport } from './doctor';

/**
 * The services the UI can call, one interface per channel. The main process registers an
 * implementation of `AppServices` (the compiler rejects one that does not match) and the
 * renderer gets a typed proxy over whichever transport exists (IPC or WebSocket).
 */
export interface DoctorService {
  report(): Promise<DoctorReport>;
}

export interface AppServices {
  doctor: DoctorService;
}

export type ServiceName = keyof AppServices;

/**
 * The allow-list of callable methods per service. A request for anything else is refused
 * at the boundary, whatever the implementation object happens to carry.
 */
export const SERVICE_METHODS = {
  doctor: ['report'],
} as const satisfies { [S in ServiceName]: readonly (keyof AppServices[S] & string)[] };

/** Events pushed from main: whole-state snapshots keyed by channel name. */
export interface AppEvents {
  'doctor.report': DoctorReport;
}

export type EventName = keyof AppEvents;

export interface RpcRequest {
  service: string;
  method: string;
  args: unknown[];
}

export type RpcResponse = { ok: true; result: unknown } | { ok: false; error: ErrorShape };

/** Channel names used by the Electron IPC transport and the preload bridge. */
export const IPC_CALL_CHANNEL = 'inferlab:call';
export const IPC_EVENT_CHANNEL = 'inferlab:event';

export type { DoctorReport } from './doctor';
