import { contextBridge, ipcRenderer } from 'electron';
import { CHOOSE_MODEL_CHANNEL, type DesktopBridge } from '../shared/desktop-bridge';

// The page's one way to the desktop app. Only this function crosses; ipcRenderer itself never does.
const bridge: DesktopBridge = {
  chooseModelFile: (): Promise<string | null> => ipcRenderer.invoke(CHOOSE_MODEL_CHANNEL) as Promise<string | null>,
};
contextBridge.exposeInMainWorld('inferlabDesktop', bridge);
