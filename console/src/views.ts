// What the admin and management API answer, typed by the server's own views
// and commands. Type-only imports: esbuild erases them, so nothing of the
// server is bundled.
import type { addOidcAppKey, changeOidcApp, createOidcApp, regenerateOidcAppSecret } from '../../src/commands/apps.ts';
import type { addMachineUser } from '../../src/commands/add-machine.ts';
import type { issueMachineKey, issueMachineSecret, issuePersonalAccessToken } from '../../src/commands/machine-credentials.ts';
import type { SearchResult } from '../../src/domain/search.ts';

export type { SearchResult };
export type { AppView } from '../../src/queries/apps.ts';
export type { SamlAppView } from '../../src/queries/saml-apps.ts';
export type { CredentialView, UserGrantView, UserView } from '../../src/queries/get-user.ts';
export type { OrgPolicyView, PolicyView } from '../../src/queries/policies.ts';
export type { ProjectView } from '../../src/queries/projects.ts';
export type { EventView, OrgView, ProjectListItem } from '../../src/queries/search.ts';
export type { SigningKeyView } from '../../src/queries/signing-keys.ts';

/** The answer of a call that creates or changes something: what its command returns. */
type Answer<Command extends (...args: never[]) => Promise<unknown>> = Awaited<ReturnType<Command>>;

export type CreatedApp = Answer<typeof createOidcApp>;
export type ChangedApp = Answer<typeof changeOidcApp>;
export type IssuedAppKey = Answer<typeof addOidcAppKey>;
export type RegeneratedSecret = Answer<typeof regenerateOidcAppSecret>;
export type IssuedMachineKey = Answer<typeof issueMachineKey>;
export type IssuedMachineSecret = Answer<typeof issueMachineSecret>;
export type IssuedPat = Answer<typeof issuePersonalAccessToken>;
export type CreatedMachine = Answer<typeof addMachineUser>;
export type { AuthFactorView } from '../../src/queries/auth-factors.ts';
export type { UserSessionView } from '../../src/queries/user-sessions.ts';
export type { MemberView } from '../../src/queries/members.ts';

// Mail and SMS, message texts, a user's metadata and IdP links.
import type { setSmsRelay } from '../../src/commands/sms-relay.ts';
import type { resetPasswordByAdmin } from '../../src/commands/password-codes.ts';
import type { getSmsRelay } from '../../src/queries/sms-relay.ts';
export type { SmtpSettingsView } from '../../src/queries/smtp-settings.ts';
export type { MessageTextsView } from '../../src/queries/message-texts.ts';
export type { MetadataView } from '../../src/queries/user-metadata.ts';
export type { IdpLink } from '../../src/storage/idp-links.ts';
export type SmsRelayView = Answer<typeof getSmsRelay>;
export type SetSmsRelay = Answer<typeof setSmsRelay>;
export type PasswordReset = Answer<typeof resetPasswordByAdmin>;
// integrations: identity providers, actions, SAML apps
import type { SamlAppView } from '../../src/queries/saml-apps.ts';
import type { createIdp } from '../../src/commands/idps.ts';
import type { addTarget } from '../../src/commands/actions.ts';
export type { IdpView } from '../../src/queries/idps.ts';
export type { PolicyIdpView } from '../../src/queries/login-policy-idps.ts';
export type { ExecutionView, TargetView } from '../../src/queries/actions.ts';
export type { DeliveryState } from '../../src/storage/action-deliveries.ts';
export type CreatedIdp = Answer<typeof createIdp>;
export type CreatedTarget = Answer<typeof addTarget>;
/** `POST …/apps/saml` answers the new app's id and the write's details (the command's module is not for the browser's type check). */
export type CreatedSamlApp = Pick<SamlAppView, 'appId' | 'details'>;
