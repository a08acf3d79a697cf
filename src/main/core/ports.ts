import net from 'node:net';

/**
 * Asks the OS for a free loopback port. The port can be taken again before the caller
 * binds it, so callers that spawn a server retry with a new port when the bind fails.
 */
export function findFreePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const address = server.address();
      server.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('The OS did not report the port it assigned'));
      });
    });
  });
}

/** What to do when a server could not bind its port. */
export const PORT_TAKEN_HINT = 'The port was taken; start again (a new free port is chosen) or stop the other server.';

/** Whether something already listens on the port: a bind there fails with EADDRINUSE. */
export function isPortInUse(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'EADDRINUSE'));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(false)));
  });
}
