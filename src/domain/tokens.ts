/** Who a bearer token stands for, and who acts for them when the token came from an impersonation. */
export interface TokenOwner {
  userId: string;
  orgId: string;
  impersonatorId?: string;
  /** A token bound to a DPoP key (RFC 9449 6): the key's thumbprint, and the client the token was issued to. */
  binding?: { jkt: string; clientId: string };
}

/** The owner of a bearer token, or undefined when this verifier does not know it. */
export type TokenVerifier = (token: string) => Promise<TokenOwner | undefined>;
