import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';

/**
 * Host names that the system resolver maps to loopback here: `localhost`,
 * and the machine's own name when the hosts file maps it to 127.0.0.1 (as
 * on the test machines, where it is `vm`: the name of the issue's
 * reproduction).
 */
export async function loopbackNames(): Promise<string[]> {
  const own = hostname();
  const addresses = await lookup(own, { all: true }).catch(() => []);
  const loopback = addresses.length > 0 && addresses.every(({ address }) => address.startsWith('127.') || address === '::1');
  return loopback && own !== 'localhost' ? ['localhost', own] : ['localhost'];
}
