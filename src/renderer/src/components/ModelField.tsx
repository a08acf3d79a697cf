import { useEffect, useId, useState } from 'react';
import type { AppServices } from '../../../shared/contract';
import type { ModelEntry } from '../../../shared/contract/models';
import type { DesktopBridge } from '../../../shared/desktop-bridge';

declare global {
  interface Window {
    /** Only in the desktop app (see src/preload). */
    inferlabDesktop?: DesktopBridge;
  }
}

const DEMO_MODELS = ['demo:f16', 'demo:q8_0', 'demo:q4_k_m'];

/** One scan of the model folders per connection, shared by every form that offers models; a failed one is asked again next time. */
const libraries = new WeakMap<AppServices, Promise<ModelEntry[]>>();
function modelLibrary(client: AppServices): Promise<ModelEntry[]> {
  const library = libraries.get(client);
  if (!library) {
    const scanned = client.models.scan().then((scan) => scan.models.filter((model) => model.valid));
    // Forgotten on failure (each field that asked shows the error); the handler keeps this copy's rejection handled.
    scanned.catch((_error: unknown) => libraries.get(client) === scanned && libraries.delete(client));
    libraries.set(client, scanned);
    return scanned;
  }
  return library;
}

/** Forgets the scanned library, after a scan or a quantization changed what is on disk. */
export function forgetModelLibrary(client: AppServices): void {
  libraries.delete(client);
}

/**
 * A model: typed as a path or a demo reference, picked from the library (the model folders,
 * the Hugging Face, LM Studio, llama.cpp and Ollama stores), or, in the desktop app, chosen in
 * the native file dialog.
 */
export function ModelField({
  client,
  value,
  onChange,
  label = 'model',
}: {
  client: AppServices;
  value: string;
  onChange: (model: string) => void;
  label?: string;
}) {
  const listId = useId();
  const [models, setModels] = useState<ModelEntry[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  // The library only offers choices, but an empty list must not look like folders with no models in them.
  useEffect(
    () =>
      void modelLibrary(client).then(setModels, (error: Error) => setProblem(`The model folders could not be listed: ${error.message}`)),
    [client],
  );
  const desktop = typeof window !== 'undefined' ? window.inferlabDesktop : undefined;
  return (
    <label>
      Model{' '}
      <input
        aria-label={label}
        list={listId}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        size={36}
        placeholder="demo:q8_0, a GGUF path, or pick one"
      />
      <datalist id={listId}>
        {DEMO_MODELS.map((ref) => (
          <option key={ref} value={ref}>
            demo model
          </option>
        ))}
        {models.map((model) => (
          <option key={model.path} value={model.path}>
            {model.name} · {model.quantization ?? '?'}
          </option>
        ))}
      </datalist>
      {desktop && (
        <button
          type="button"
          onClick={() =>
            void desktop.chooseModelFile().then(
              (file) => {
                setProblem(null);
                if (file) onChange(file);
              },
              (error: Error) => setProblem(error.message),
            )
          }
        >
          Browse…
        </button>
      )}
      {problem && <small className="error">{problem}</small>}
    </label>
  );
}
