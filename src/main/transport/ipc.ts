import { ipcMain, type WebContents } from 'electron';
import { IPC_CALL_CHANNEL, IPC_EVENT_CHANNEL, type AppEvents, type EventName } from '../../shared/contract';
import type { RpcDispatcher } from '../rpc/dispatcher';
import { ErrorCode } from '../../shared/errors';

/** The Electron transport: one invoke channel into the dispatcher, one event channel out. */
export function registerIpcTransport(dispatcher: RpcDispatcher, isTrustedSender: (sender: WebContents) => boolean): () => void {
  ipcMain.handle(IPC_CALL_CHANNEL, async (event, request: unknown) => {
    if (!isTrustedSender(event.sender)) return { ok: false, error: { code: ErrorCode.InvalidInput, message: 'untrusted sender' } };
    return dispatcher.dispatch(request);
  });
  return () => ipcMain.removeHandler(IPC_CALL_CHANNEL);
}

export function sendEvent<E extends EventName>(target: WebContents, name: E, payload: AppEvents[E]): void {
  if (!target.isDestroyed()) target.send(IPC_EVENT_CHANNEL, name, payload);
}
