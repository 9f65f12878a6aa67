// The grant types beyond RFC 6749's own, by their registered URNs: each is
// named here once, for the apps that list them, the engine's grant
// handlers and discovery.

/** RFC 7523 2.1: the JWT profile, a machine user's signed assertion. */
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** RFC 8693 2.1: token exchange. */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** RFC 8628 3.4: the device authorization grant. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
