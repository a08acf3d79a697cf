/**
 * A reading taken at most once per `reuseMs`: callers within that span share it (a reading still
 * in flight included), and the first caller after it starts a fresh one. A failed reading is not
 * kept, so the next caller tries again.
 */
export function reusedReading<T>(reuseMs: number, read: () => Promise<T>): (now?: number) => Promise<T> {
  let last: { readAt: number; reading: Promise<T> } | null = null;
  return (now = Date.now()) => {
    if (last && now - last.readAt <= reuseMs && now >= last.readAt) return last.reading;
    const current = { readAt: now, reading: read() };
    current.reading.catch(() => {
      if (last === current) last = null;
    });
    last = current;
    return current.reading;
  };
}
