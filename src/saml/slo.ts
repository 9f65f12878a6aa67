import type Provider from 'oidc-provider';
import type { Database } from '../storage/database.ts';
import { endSessionNamedBySp } from '../commands/end-user-sessions.ts';
import { parseLogoutRequest } from '../domain/saml/requests.ts';
import { SAML_PATHS } from '../domain/saml/engine-client.ts';
import { acceptMessage } from './accept-request.ts';
import type { InboundMessage } from './bindings.ts';
import { continueChain, participantsOf, type LogoutAnswer, type LogoutChainDeps, type Participant } from './logout-chain.ts';

// Single logout (SAML 2.0 Profiles 4.4), started by a service provider:
// its LogoutRequest passes the same checks as an AuthnRequest; the browser
// sessions it names by SessionIndex (the engine session's uid, which the
// assertion carried) end as an OIDC logout would, when they are the named
// user's; the session's other SAML apps are then logged out in turn
// (logout-chain.ts), and the SP gets a signed LogoutResponse at its
// SingleLogoutService.

export interface LogoutDeps extends LogoutChainDeps {
  db: Database;
  provider: () => Provider;
}

export async function singleLogout(deps: LogoutDeps, inbound: InboundMessage): Promise<LogoutAnswer> {
  const { request, app } = await acceptMessage(deps, inbound, parseLogoutRequest, `${deps.issuer}${SAML_PATHS.slo}`);
  const others: Participant[] = [];
  for (const uid of request.sessionIndexes) {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(uid)) continue;
    const ended = await endSessionNamedBySp(deps.db, deps.provider(), uid, request.nameId);
    if (ended) others.push(...(await participantsOf(deps, ended, app.id)));
  }
  const relay = inbound.relayState === undefined ? {} : { relayState: inbound.relayState };
  return continueChain(deps, { origin: { appId: app.id, requestId: request.id, ...relay }, remaining: others, partial: false });
}
