/** Whether a host name or address is this machine's loopback, as written (not a name that merely resolves there). IPv6 may come bracketed, as URLs write it. */
export function isLoopback(host: string): boolean {
  const bare = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^127\.\d+\.\d+\.\d+$/.test(bare);
}
