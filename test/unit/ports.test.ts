import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { findFreePort, isPortInUse } from '../../src/main/core/ports';

describe('isPortInUse', () => {
  it('tells a port someone listens on from a free one', async () => {
    const holder = net.createServer();
    const held = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as net.AddressInfo).port)),
    );
    try {
      expect(await isPortInUse(held)).toBe(true);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
    expect(await isPortInUse(held)).toBe(false);
    expect(await isPortInUse(await findFreePort())).toBe(false);
  });
});
