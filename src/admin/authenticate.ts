import type { Middleware } from 'koa';
import type { Queryable } from '../storage/database.ts';
import { Unauthenticated } from '../domain/errors.ts';
import { loadPrincipal } from '../queries/principal.ts';

/** Who a bearer token stands for, and who acts for them when the token came from an impersonation. */
export interface TokenOwner {
  userId: string;
  orgId: string;
  impersonatorId?: string;
}

/** The owner of a bearer token, or undefined when this verifier does not know it. */
export type TokenVerifier = (token: string) => Promise<TokenOwner | undefined>;

// RFC 6750: a case-insensitive scheme (RFC 7235), one or more spaces, a
// b64token — with a generous length cap.
const BEARER = /^Bearer +([A-Za-z0-9._~+/-]{1,4096}=*)$/i;

/**
 * `Authorization: Bearer <token>`, tried against each verifier in turn (PATs
 * now; the engine's access tokens join the list with the machine grants).
 */
export function authenticate(db: Queryable, verifiers: TokenVerifier[]): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (!header) throw new Unauthenticated('missing Authorization: Bearer token');
    const match = BEARER.exec(header);
    if (!match) throw new Unauthenticated('malformed Authorization header; expected Bearer token');
    let owner: TokenOwner | undefined;
    for (const verify of verifiers) {
      owner = await verify(match[1]!);
      if (owner) break;
    }
    if (!owner) throw new Unauthenticated('token is invalid or expired');
    ctx.state.principal = await loadPrincipal(db, owner);
    await next();
  };
}
