/** A stored Float64Array blob as a Float64Array (copied only when the blob is not 8-byte aligned). */
export function float64View(blob: Buffer | null): Float64Array {
  if (!blob || blob.byteLength === 0) return new Float64Array(0);
  if (blob.byteOffset % 8 === 0) return new Float64Array(blob.buffer, blob.byteOffset, blob.byteLength / 8);
  const copy = new Uint8Array(blob);
  return new Float64Array(copy.buffer, 0, copy.byteLength / 8);
}
