// Whether a host name means this machine only: a --host value that listens on
// loopback, or the name in a Host header. The listeners without their own
// authentication depend on it: `orq serve` refuses the beanstalkd port on
// another address while tokens are set, and the dashboard without tokens
// answers only when bound to loopback and reached by a loopback Host name.
// "0.0.0.0" and "::" are every interface, so not loopback.

export function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase();
  if (name === "localhost" || name === "::1" || name === "[::1]") return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
