import { lookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { addressRefusal } from './address-policy.ts';
import { OutboundRefused } from './errors.ts';

/**
 * The system resolver, answering only when every address of the host may
 * be reached: the socket then connects to one of exactly those addresses,
 * so a name cannot pass the check with one answer and be connected with
 * another (DNS rebinding). One refused address refuses the host, whichever
 * the socket would have tried first. Sockets other than HTTP ones (LDAP,
 * ./ldap.ts) connect through it too.
 */
export function checkedLookup(privateAllowed: boolean): LookupFunction {
  return (hostname, options: LookupOptions, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      for (const { address } of addresses) {
        const refusal = addressRefusal(address, privateAllowed);
        if (refusal) return callback(new OutboundRefused(hostname, refusal), '', 0);
      }
      if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, addresses);
      // A lookup that succeeds answers at least one address.
      const { address, family } = addresses[0]!;
      return callback(null, address, family);
    });
  };
}

/**
 * undici's dispatcher (the HTTP client under Node's fetch) whose sockets
 * only reach allowed addresses: host names through the checked lookup, IP
 * literals (which a socket connects to without any lookup) checked here.
 */
export function checkedAgent(privateAllowed: boolean): Agent {
  const connectChecked = buildConnector({ lookup: checkedLookup(privateAllowed) });
  return new Agent({
    connect(options, callback) {
      const refusal = isIP(options.hostname) ? addressRefusal(options.hostname, privateAllowed) : undefined;
      if (refusal) return callback(new OutboundRefused(options.hostname, refusal), null);
      return connectChecked(options, callback);
    },
  });
}
