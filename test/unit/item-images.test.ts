import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { itemImageUris, MAX_IMAGE_BYTES } from '../../src/main/workload/item-images';
import { parseWorkloadText } from '../../src/main/workload/parse-workload';
import { messagesAsKept, requestFor } from '../../src/main/runner/request-plan';
import type { ResolvedItem } from '../../src/main/workload/workload-types';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

/** The first bytes of each format (constructed): enough for the sniffing, which reads nothing else. */
const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const JPEG = Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]);
const WEBP = Uint8Array.from([...Buffer.from('RIFF'), 36, 0, 0, 0, ...Buffer.from('WEBPVP8 ')]);
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('the images a workload item shows', () => {
  it('reads files beside the workload and inline data URIs, each typed by its first bytes, not by its name or claim', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'photo.jpg'), PNG); // a PNG named .jpg is sent as the PNG it is
    fs.writeFileSync(path.join(dir, 'still.webp'), WEBP);
    const uris = await itemImageUris(
      [{ file: 'photo.jpg' }, { file: 'still.webp' }, { url: `data:image/png;base64,${base64(JPEG)}` }],
      dir,
      'groups[0].items[0]',
    );
    expect(uris).toEqual([
      `data:image/png;base64,${base64(PNG)}`,
      `data:image/webp;base64,${base64(WEBP)}`,
      `data:image/jpeg;base64,${base64(JPEG)}`,
    ]);
  });

  it('refuses what is no image, too large, missing or on the network, naming the item, the image and what to do', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'notes.png'), 'just text, named like a picture');
    const huge = path.join(dir, 'huge.png');
    // Sparse: the size is checked before a byte is read.
    fs.writeFileSync(huge, PNG);
    fs.truncateSync(huge, MAX_IMAGE_BYTES + 1);
    const refusal = (image: Parameters<typeof itemImageUris>[0][number]) =>
      itemImageUris([image], dir, 'Invalid workload w.yaml: groups[1].items[2]').then(
        () => 'accepted',
        (error: Error) => error.message,
      );
    const place = 'Invalid workload w.yaml: groups[1].items[2].images[0]';
    expect(await refusal({ file: 'notes.png' })).toBe(
      `${place}: ${path.join(dir, 'notes.png')}: is not an image llama-server decodes (PNG, JPEG, GIF, BMP, WEBP), by its first bytes`,
    );
    expect(await refusal({ file: 'huge.png' })).toBe(
      `${place}: ${huge}: image file is ${MAX_IMAGE_BYTES + 1} bytes, over the 20 MiB (${MAX_IMAGE_BYTES}-byte) limit`,
    );
    expect(await refusal({ file: 'gone.png' })).toBe(`${place}: ${path.join(dir, 'gone.png')}: image file not found`);
    expect(await refusal({ file: '.' })).toBe(`${place}: ${dir}: image file is a folder, not a file`);
    expect(await refusal({ url: 'https://example.com/cat.png' })).toMatch(/images are never fetched from the network$/);
    expect(await refusal({ url: 'data:image/png;base64,@@@@' })).toMatch(/is not valid base64 after "base64,"$/);
    expect(await refusal({ url: `data:image/png;base64,${'A'.repeat(Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 8)}` })).toMatch(
      /holds more than 20 MiB$/,
    );
    expect(await refusal({ url: 'data:image/png;base64,' })).toMatch(/is empty$/);
  });

  it('puts an item’s images beside its last user message, as OpenAI content parts', () => {
    const item = {
      messages: [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'noted' },
        { role: 'user', content: 'and this one?' },
      ],
      images: ['data:image/png;base64,AAAA'],
      sampling: { max_tokens: 4 },
    } as unknown as ResolvedItem;
    const { path: route, body } = requestFor(item);
    expect(route).toBe('/v1/chat/completions');
    expect(body.messages).toEqual([
      { role: 'user', content: 'first' },
      { role: 'assistant', content: 'noted' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and this one?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
    ]);
    // Without images the messages go as they are: a text workload's requests do not change.
    expect(requestFor({ ...item, images: undefined }).body.messages).toBe(item.messages);
  });

  it('keeps an image in a run as its type, size and sha256, never its bytes', () => {
    const kept = messagesAsKept([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${base64(PNG)}` } },
        ],
      },
    ]);
    expect(JSON.stringify(kept)).not.toContain(base64(PNG));
    expect(kept).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: `image/png, 12 bytes, sha256 ${sha256(PNG)}` } },
        ],
      },
    ]);
  });

  it('refuses images on an item that has no user message to show them with, naming the field', () => {
    const workload = (item: string) => `name: w\ngroups:\n  - name: g\n    items:\n      - id: a\n${item}`;
    expect(() => parseWorkloadText(workload('        prompt: hello\n        images:\n          - file: a.png\n'), 'w.yaml')).toThrow(
      /groups\[0\]\.items\[0\]\.images: images are shown with a user message/,
    );
    expect(() =>
      parseWorkloadText(workload('        messages: [{ role: user, content: hi }]\n        images:\n          - path: a.png\n'), 'w.yaml'),
    ).toThrow(/images/);
    expect(
      parseWorkloadText(workload('        messages: [{ role: user, content: hi }]\n        images:\n          - file: a.png\n'), 'w.yaml')
        .groups[0]!.items![0]!.images,
    ).toEqual([{ file: 'a.png' }]);
  });
});

function sha256(bytes: Uint8Array): string {
  return crypto.createHash('sha256').update(bytes).digest('hex');
}
