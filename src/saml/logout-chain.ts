import type { Queryable } from '../storage/database.ts';
import { findSamlApp } from '../storage/saml-apps.ts';
import { samlAppIdOfClient } from '../domain/saml/engine-client.ts';
import { logoutRequestXml, logoutResponseXml, STATUS, type LogoutTarget } from '../domain/saml/messages.ts';
import { parseLogoutResponse } from '../domain/saml/requests.ts';
import { SamlRefused } from '../domain/saml/xml.ts';
import { acceptMessage, type AcceptDeps } from './accept-request.ts';
import type { InboundMessage } from './bindings.ts';
import type { IdpKeys } from './idp-keys.ts';
import type { SessionParticipants } from './participants.ts';
import type { SingleUseRecords } from '../security/single-use-records.ts';
import { destinationOf, logoutEndpoint, sendToSp, type BrowserTrip } from './to-sp.ts';

// Single logout across the session's participants (SAML 2.0 Profiles
// 4.4.3, front channel): once the IdP session has ended, each other SAML
// app the session signed into gets a LogoutRequest through the browser, one
// after the other, and answers with a LogoutResponse at the IdP's SLO
// endpoint; then the browser goes back to whoever started the logout: the
// SP that asked, with a LogoutResponse (PartialLogout when an app could not
// be told or said no), or the next page of an OIDC logout. The chain's
// state waits under a single-use id that travels as RelayState.

/** How long a participant may take to answer before the chain is forgotten. */
export const CHAIN_TTL_SECONDS = 600;

export interface Participant extends LogoutTarget {
  appId: string;
}

export interface LogoutChain {
  /** The SP whose LogoutRequest started the logout; none when the IdP started it. */
  origin?: { appId: string; requestId: string; relayState?: string };
  /** Where the browser goes at the end of a logout the IdP started (a URL the engine chose). */
  finish?: string;
  remaining: Participant[];
  /** The LogoutRequest whose answer the chain waits for. */
  waiting?: { appId: string; requestId: string };
  /** A participant could not be told, or did not log out. */
  partial: boolean;
}

export type LogoutAnswer = BrowserTrip | { done: true };

export interface LogoutChainDeps extends AcceptDeps {
  db: Queryable;
  keys: IdpKeys;
  issuer: string;
  idpEntityId: string;
  chains: SingleUseRecords<LogoutChain>;
  participants: SessionParticipants;
}

export interface EndedSession {
  uid: string;
  accountId?: string;
  authorizations?: Record<string, unknown>;
}

/** The SAML apps the ended session signed into, but `except` (the SP that asked), as LogoutRequest targets. */
export async function participantsOf(deps: LogoutChainDeps, session: EndedSession, except?: string): Promise<Participant[]> {
  if (!session.accountId) return [];
  const appIds = Object.keys(session.authorizations ?? {}).flatMap((clientId) => {
    const appId = samlAppIdOfClient(clientId);
    return appId && appId !== except ? [appId] : [];
  });
  return Promise.all(appIds.map(async (appId) => ({ appId, ...(await deps.participants.targetOf(session.uid, appId, session.accountId!)) })));
}

/** The origin SP's LogoutResponse, at its SingleLogoutService; the logged-out page when it has none. */
async function answerOrigin(deps: LogoutChainDeps, chain: LogoutChain): Promise<LogoutAnswer> {
  const origin = chain.origin!;
  const app = await findSamlApp(deps.db, origin.appId);
  const endpoint = app && logoutEndpoint(app.slo);
  if (!app || !endpoint) return { done: true };
  const status = chain.partial ? [STATUS.responder, STATUS.partialLogout] : [STATUS.success];
  const { xml, id } = logoutResponseXml(deps.idpEntityId, destinationOf(endpoint, 'SAMLResponse'), origin.requestId, status[0]!, status[1]);
  return sendToSp(endpoint, { field: 'SAMLResponse', xml, id, localName: 'LogoutResponse', appName: app.name, ...relayOf(origin.relayState) }, deps.keys);
}

const relayOf = (relayState: string | undefined) => (relayState === undefined ? {} : { relayState });

/** The next participant's LogoutRequest; at the end, the answer to whoever started the logout. */
export async function continueChain(deps: LogoutChainDeps, chain: LogoutChain): Promise<LogoutAnswer> {
  let partial = chain.partial;
  for (let next = 0; next < chain.remaining.length; next += 1) {
    const participant = chain.remaining[next]!;
    const app = await findSamlApp(deps.db, participant.appId);
    const endpoint = app && logoutEndpoint(app.slo);
    if (!app || !endpoint) {
      // An app without a SingleLogoutService cannot be told (or was removed): the logout is partial.
      partial = true;
      continue;
    }
    const { xml, id } = logoutRequestXml(deps.idpEntityId, destinationOf(endpoint, 'SAMLRequest'), participant);
    const waiting: LogoutChain = { ...chain, remaining: chain.remaining.slice(next + 1), waiting: { appId: app.id, requestId: id }, partial };
    const state = await deps.chains.put(waiting);
    return sendToSp(endpoint, { field: 'SAMLRequest', xml, id, localName: 'LogoutRequest', appName: app.name, relayState: state }, deps.keys);
  }
  const ended = { ...chain, remaining: [], partial };
  if (ended.origin) return answerOrigin(deps, ended);
  return ended.finish ? { redirect: ended.finish } : { done: true };
}

/**
 * A participant's LogoutResponse (checked as any message from an SP is,
 * src/saml/accept-request.ts): it must answer the LogoutRequest the chain
 * under its RelayState waits for, from that very app. Then the chain goes on.
 */
export async function participantAnswered(deps: LogoutChainDeps, inbound: InboundMessage, sloUrl: string): Promise<LogoutAnswer> {
  const { request: response, app } = await acceptMessage(deps, inbound, parseLogoutResponse, sloUrl);
  const state = inbound.relayState ?? '';
  const chain = await deps.chains.find(state);
  if (!chain?.waiting) throw new SamlRefused('this logout has expired or was already finished');
  // Checked before the chain is taken: a stray answer does not end the logout under way.
  if (chain.waiting.appId !== app.id || chain.waiting.requestId !== response.inResponseTo)
    throw new SamlRefused('the LogoutResponse does not answer the logout under way');
  if (!(await deps.chains.take(state))) throw new SamlRefused('this logout has expired or was already finished');
  const { waiting: _answered, ...rest } = chain;
  return continueChain(deps, { ...rest, partial: rest.partial || response.status !== STATUS.success });
}
