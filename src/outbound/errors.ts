import type { AddressRefusal } from './address-policy.ts';

/**
 * Why an outbound call failed. Messages name the host only: a URL's path
 * and query may carry a caller's secret, and an answer's body is never
 * quoted.
 */
export abstract class OutboundError extends Error {
  abstract readonly kind: 'refused' | 'timeout' | 'too-large';
  readonly host: string;
  constructor(host: string, message: string) {
    super(message);
    this.host = host;
  }
}

/** The URL's scheme, or an address the host is or resolves to, is not allowed for this caller; no connection was opened. */
export class OutboundRefused extends OutboundError {
  override name = 'OutboundRefused';
  readonly kind = 'refused';
  readonly reason: AddressRefusal | 'scheme';
  constructor(host: string, reason: AddressRefusal | 'scheme') {
    super(host, reason === 'scheme' ? `only http and https may be called (${host || 'no host'})` : `${host} is refused: ${reason} address`);
    this.reason = reason;
  }
}

export class OutboundTimeout extends OutboundError {
  override name = 'OutboundTimeout';
  readonly kind = 'timeout';
  constructor(host: string) {
    super(host, `${host} did not answer in time`);
  }
}

/** The answer's body was longer than the client reads; reading stopped there. */
export class OutboundTooLarge extends OutboundError {
  override name = 'OutboundTooLarge';
  readonly kind = 'too-large';
  constructor(host: string, maxBytes: number) {
    super(host, `${host} answered more than ${maxBytes} bytes`);
  }
}
