// Whether a --host value listens on loopback only: the beanstalkd port has no
// authentication, so serve.ts refuses it elsewhere while tokens are set.

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === "localhost" || h === "::1" || h === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
