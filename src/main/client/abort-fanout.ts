/**
 * Abort callbacks kept in a Set behind one listener per signal. Node's EventTarget scans its
 * listener list on every addEventListener (to drop duplicates), so thousands of in-flight
 * requests each adding a listener to the run's one cancel signal cost O(n²): at 5,000
 * concurrent streams that scan was an eighth of the client's CPU.
 */
const callbacksBySignal = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `callback` once when `signal` aborts (never if it already has); the returned function unregisters it. */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = callbacksBySignal.get(signal);
  if (!callbacks) {
    const created = new Set<() => void>();
    callbacks = created;
    callbacksBySignal.set(signal, created);
    signal.addEventListener(
      'abort',
      () => {
        callbacksBySignal.delete(signal);
        for (const pending of [...created]) pending();
      },
      { once: true },
    );
  }
  const registered = callbacks;
  registered.add(callback);
  return () => void registered.delete(callback);
}
