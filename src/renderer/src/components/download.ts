/** Offers content as a file download, the way a browser and the desktop window both handle. */
export function downloadBytes(name: string, content: string | Uint8Array, type: string): void {
  const url = URL.createObjectURL(new Blob([content as BlobPart], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export const downloadFile = (name: string, content: string, type: string): void => downloadBytes(name, content, type);
