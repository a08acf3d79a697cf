import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rootedPaths } from '../../src/main/core/path-policy';
import { useTempDirs } from '../support/temp';

const tempDir = useTempDirs();

describe('a path checked against the roots', () => {
  it('is handed on as the location that was checked, so a link swapped between check and use still leads inside', async () => {
    const root = fs.realpathSync(tempDir());
    const outside = fs.realpathSync(tempDir());
    fs.writeFileSync(path.join(root, 'inside.yaml'), 'inside');
    fs.writeFileSync(path.join(outside, 'secret.yaml'), 'SECRET');
    const policy = rootedPaths({ model: [path.join(root, 'models')], workload: [root], text: [root], results: [root] });

    const link = path.join(root, 'link.yaml');
    fs.symlinkSync(path.join(root, 'inside.yaml'), link);
    const checked = await policy.check(link, 'workload');
    fs.unlinkSync(link);
    fs.symlinkSync(path.join(outside, 'secret.yaml'), link);
    expect(fs.readFileSync(checked, 'utf8')).toBe('inside');

    // A model keeps its own file name (runs are labelled with it) under its folder's real location.
    const models = path.join(root, 'models');
    fs.mkdirSync(path.join(models, 'real'), { recursive: true });
    fs.writeFileSync(path.join(models, 'real', 'm.gguf'), 'inside');
    fs.writeFileSync(path.join(outside, 'm.gguf'), 'SECRET');
    const folderLink = path.join(models, 'current');
    fs.symlinkSync(path.join(models, 'real'), folderLink);
    const model = await policy.check(path.join(folderLink, 'm.gguf'), 'model');
    expect(model).toBe(path.join(models, 'real', 'm.gguf'));
    fs.unlinkSync(folderLink);
    fs.symlinkSync(outside, folderLink);
    expect(fs.readFileSync(model, 'utf8')).toBe('inside');
  });
});
