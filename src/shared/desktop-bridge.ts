/**
 * What the desktop window's preload offers the page, and nothing more: the native file dialog for
 * a model. The page learns only the path the person chose; the local service may then use that file.
 */
export interface DesktopBridge {
  chooseModelFile(): Promise<string | null>;
}

/** The preload's one IPC channel. */
export const CHOOSE_MODEL_CHANNEL = 'inferlab:choose-model-file';
