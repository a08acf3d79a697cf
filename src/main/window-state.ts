import fs from 'node:fs';
import path from 'node:path';

export interface WindowState {
  x?: number;
  y?: number;
  width: number;
  height: number;
  maximized: boolean;
}

const DEFAULT_STATE: WindowState = { width: 1280, height: 820, maximized: false };

/** The window's last size and place, from a small JSON file; anything unreadable means the default. */
export function loadWindowState(file: string): WindowState {
  try {
    const state = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<WindowState>;
    const size = (value: unknown, minimum: number) =>
      typeof value === 'number' && Number.isFinite(value) && value >= minimum ? value : undefined;
    const width = size(state.width, 400);
    const height = size(state.height, 300);
    if (!width || !height) return DEFAULT_STATE;
    return {
      width,
      height,
      x: typeof state.x === 'number' ? state.x : undefined,
      y: typeof state.y === 'number' ? state.y : undefined,
      maximized: state.maximized === true,
    };
  } catch {
    return DEFAULT_STATE;
  }
}

export function saveWindowState(file: string, state: WindowState): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify(state));
  } catch {
    // Remembering the window is a convenience; failing to must not block quitting.
  }
}
