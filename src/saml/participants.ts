import type { Adapter } from 'oidc-provider';
import type { LogoutTarget } from '../domain/saml/messages.ts';
import { NAMEID_FORMATS } from '../domain/saml/requests.ts';

// The session participants of single logout (SAML 2.0 Profiles 4.4): which
// SAML apps a browser session signed into is the engine's own record (the
// session's authorizations name each app's engine client,
// src/domain/saml/engine-client.ts); what the IdP told each app about the
// user (the NameID and its format, which its LogoutRequest must repeat) is
// kept here, per session and app, in the engine-record storage.

interface SubjectRecord {
  nameId: string;
  nameIdFormat: string;
}

export interface SessionParticipants {
  /** What the app was told in this session's assertion; kept as long as an idle session lives. */
  note(sessionUid: string, appId: string, subject: SubjectRecord): Promise<void>;
  /** The LogoutRequest subject for the app: as it was told, else the persistent user id (the default format). */
  targetOf(sessionUid: string, appId: string, userId: string): Promise<LogoutTarget>;
}

const key = (sessionUid: string, appId: string) => `${sessionUid}.${appId}`;

export function sessionParticipants(store: Adapter, lifetimeSeconds: number): SessionParticipants {
  return {
    async note(sessionUid, appId, subject) {
      await store.upsert(key(sessionUid, appId), { ...subject }, lifetimeSeconds);
    },
    async targetOf(sessionUid, appId, userId) {
      const told = (await store.find(key(sessionUid, appId))) as SubjectRecord | undefined;
      const subject = told?.nameId ? told : { nameId: userId, nameIdFormat: NAMEID_FORMATS.persistent };
      return { nameId: subject.nameId, nameIdFormat: subject.nameIdFormat, sessionIndex: sessionUid };
    },
  };
}
