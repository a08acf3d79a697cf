import path from 'node:path';
import { ErrorCode } from '../../shared/errors';
import { AppError } from '../core/errors';
import { readFileCapped } from '../core/read-capped';
import type { ImageDef, WorkloadDef } from './workload-types';

/** The most bytes one image may hold: a photograph from a phone fits many times over, a mistaken video file does not. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

/** Image formats llama-server decodes, told by their first bytes rather than by a name or a claimed type. */
const IMAGE_SIGNATURES: { mime: string; matches: (bytes: Uint8Array) => boolean }[] = [
  { mime: 'image/png', matches: (b) => b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 },
  { mime: 'image/jpeg', matches: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  { mime: 'image/gif', matches: (b) => b[0] === 0x47 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x38 },
  { mime: 'image/bmp', matches: (b) => b[0] === 0x42 && b[1] === 0x4d },
  {
    mime: 'image/webp',
    matches: (b) =>
      b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && String.fromCharCode(...b.subarray(8, 12)) === 'WEBP',
  },
];

const DATA_URI = /^data:(image\/[a-z+.-]+);base64,/;

function mimeOf(bytes: Uint8Array): string | null {
  return IMAGE_SIGNATURES.find((signature) => signature.matches(bytes))?.mime ?? null;
}

const formats = () => IMAGE_SIGNATURES.map(({ mime }) => mime.replace('image/', '').toUpperCase()).join(', ');

/** The bytes of an image given inline, checked as a file's would be. */
function inlineImage(url: string, refuse: (problem: string) => never): Uint8Array {
  const header = DATA_URI.exec(url);
  if (!header) return refuse('url must be a data URI of an image (data:image/png;base64,…); images are never fetched from the network');
  const encoded = url.slice(header[0].length);
  // Base64 holds 3 bytes in 4 characters: the size is known before anything is decoded.
  if ((encoded.length / 4) * 3 > MAX_IMAGE_BYTES + 3) return refuse(`holds more than ${MAX_IMAGE_BYTES / 1024 / 1024} MiB`);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded)) return refuse('is not valid base64 after "base64,"');
  return Buffer.from(encoded, 'base64');
}

/** The bytes of an image file: a regular file (never a FIFO or a device), its size checked before it is read. */
async function fileImage(file: string, refuse: (problem: string) => never): Promise<Uint8Array> {
  return readFileCapped(file, 'image file', MAX_IMAGE_BYTES).catch((error: Error) => refuse(error.message));
}

/**
 * An item's images as the data URIs a chat request carries: files are read here, on this machine,
 * and go only to the local server; each is size-checked and must be an image llama-server decodes.
 * `where` names the item's place in the workload for every error; relative files are read from `folder`.
 */
export async function itemImageUris(images: readonly ImageDef[], folder: string, where: string): Promise<string[]> {
  const uris: string[] = [];
  for (const [index, image] of images.entries()) {
    const file = 'file' in image ? path.resolve(folder, image.file) : null;
    const refuse = (problem: string): never => {
      throw new AppError(ErrorCode.InvalidInput, `${where}.images[${index}]: ${problem}`);
    };
    const bytes = file === null ? inlineImage((image as { url: string }).url, refuse) : await fileImage(file, refuse);
    const named = file === null ? '' : `${file}: `;
    if (bytes.length === 0) refuse(`${named}is empty`);
    const mime = mimeOf(bytes);
    if (mime === null) refuse(`${named}is not an image llama-server decodes (${formats()}), by its first bytes`);
    uris.push(`data:${mime};base64,${Buffer.from(bytes).toString('base64')}`);
  }
  return uris;
}

/** Whether any written item of a workload shows a picture. */
export const showsImages = (def: Pick<WorkloadDef, 'groups'>): boolean =>
  def.groups.some((group) => group.items?.some((item) => item.images !== undefined));

/**
 * Refuses, before a server starts, a workload that shows images to a server given no projector:
 * llama-server would answer each such request with an error, after the model had loaded.
 */
export function assertImagesServed(def: WorkloadDef, projector: string | null | undefined): void {
  if (projector) return;
  for (const group of def.groups)
    for (const item of group.items ?? [])
      if (item.images)
        throw new AppError(
          ErrorCode.InvalidInput,
          `workload item "${item.id}" shows images, but the profile names no image projector: set the model's projector (--set projector=mmproj-FILE.gguf, or demo:mmproj for the demo models)`,
        );
}
