import { contextBridge, ipcRenderer } from 'electron';
import { IPC_CALL_CHANNEL, IPC_EVENT_CHANNEL, type RpcResponse } from '../shared/contract';

/**
 * The whole surface the renderer gets: `call` into the dispatcher and `on` for events.
 * No ipcRenderer, no Node, nothing else crosses the context bridge.
 */
contextBridge.exposeInMainWorld('inferlab', {
  call: (service: string, method: string, args: unknown[]): Promise<RpcResponse> =>
    ipcRenderer.invoke(IPC_CALL_CHANNEL, { service, method, args }),
  on: (listener: (name: string, payload: unknown) => void): (() => void) => {
    const handler = (_event: unknown, name: string, payload: unknown) => listener(name, payload);
    ipcRenderer.on(IPC_EVENT_CHANNEL, handler);
    return () => ipcRenderer.off(IPC_EVENT_CHANNEL, handler);
  },
});
