/**
 * A setup file of the projects that start real servers: a llama-server started while a test file
 * ran must be gone when it ends. One left behind claims the cores, so the product rightly refuses
 * the next file's server and the failure lands on a test that did nothing wrong; here it lands on
 * the file that left it, naming the process that started it, and the server is stopped.
 */
import fs from 'node:fs';
import { afterAll } from 'vitest';

interface ServerProcess {
  pid: number;
  parent: string;
}

function runningServers(): ServerProcess[] {
  const servers: ServerProcess[] = [];
  if (!fs.existsSync('/proc')) return servers;
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'llama-server') continue;
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parentPid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
      let parent = `pid ${parentPid}`;
      try {
        parent += `: ${fs.readFileSync(`/proc/${parentPid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 300)}`;
      } catch {
        parent += ' (ended)';
      }
      servers.push({ pid: Number(entry), parent });
    } catch {
      // The process ended while it was read.
    }
  }
  return servers;
}

const runningBefore = new Set(runningServers().map((server) => server.pid));
/** A server stopped at the file's very end may still be exiting. */
const EXIT_GRACE_MS = 5_000;

afterAll(async () => {
  const deadline = Date.now() + EXIT_GRACE_MS;
  let leftOver = runningServers().filter((server) => !runningBefore.has(server.pid));
  while (leftOver.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    leftOver = runningServers().filter((server) => !runningBefore.has(server.pid));
  }
  if (leftOver.length === 0) return;
  for (const server of leftOver) {
    try {
      process.kill(server.pid, 'SIGKILL');
    } catch {
      // Ended meanwhile.
    }
  }
  throw new Error(
    `llama-server outlived this test file ${EXIT_GRACE_MS / 1000} s after its end (now stopped): ` +
      leftOver.map((server) => `pid ${server.pid}, started by ${server.parent}`).join('; '),
  );
}, EXIT_GRACE_MS + 5_000);
