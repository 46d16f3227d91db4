import { createConnection, createServer } from 'node:net';

/** True when something accepts TCP connections on this loopback port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A loopback port that was free a moment ago (the system's choice), and not among `taken`. */
export async function freePort(taken: Set<number> = new Set()): Promise<number> {
  for (;;) {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    if (!taken.has(port)) {
      taken.add(port);
      return port;
    }
  }
}
