import { Heading, Loading, Status, useConsole, useLoad, useSubmit } from '../../components.tsx';
import { ConfirmButton } from '../../confirm.tsx';
import { labelOf, t } from '../../i18n.ts';
import { href, navigate } from '../../router.ts';
import type { UserView } from '../../views.ts';
import { Grants } from './grants.tsx';
import { MachineCredentials } from './machine-credentials.tsx';
import { ContactForm, ProfileForm, UserNameForm } from './profile.tsx';
import { Factors, Sessions, StateChanges } from './security.tsx';
import { EmailActions } from './email-actions.tsx';
import { IdpLinks } from './idp-links.tsx';
import { Metadata } from './metadata.tsx';

// A user's page: who it is and its profile, email and phone (and the mails
// an admin sends), its state and the changes it allows, a human's second
// factors, passkeys, sessions and IdP links, a machine user's credentials,
// its metadata, its grants, and removing it.

export function UserPage({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const user = useLoad(() => api.call<{ user: UserView }>('GET', `/management/v1/users/${userId}`).then((r) => r.user), [orgId, userId]);
  const removal = useSubmit(
    () => api.call('DELETE', `/management/v1/users/${userId}`),
    () => navigate('/users'),
  );
  if (!user.data) return <Loading error={user.error} />;
  const u = user.data;
  return (
    <>
      <Heading>{u.preferredLoginName}</Heading>
      <p>
        <a href={href('/users')}>{t('back')}</a>
      </p>
      <UserFacts user={u} />
      <UserNameForm userId={userId} userName={u.userName} onSaved={user.reload} />
      <StateChanges user={u} onChanged={user.reload} />
      {u.human && (
        <>
          <ProfileForm userId={userId} human={u.human} onSaved={user.reload} />
          <ContactForm userId={userId} human={u.human} onSaved={user.reload}>
            <EmailActions user={u} human={u.human} onChanged={user.reload} />
          </ContactForm>
          <Factors userId={userId} />
          <Sessions userId={userId} />
          <IdpLinks userId={userId} />
        </>
      )}
      {u.machine && <MachineCredentials userId={userId} />}
      <Metadata userId={userId} />
      <Grants userId={userId} />
      <section aria-labelledby="remove-heading" class="danger">
        <h2 id="remove-heading">{t('removeUser')}</h2>
        <ConfirmButton
          label={t('removeUser')}
          question={t('confirmRemove', { name: u.preferredLoginName })}
          onConfirm={() => removal.submit()}
          disabled={removal.busy}
        />
        <Status error={removal.error} />
      </section>
    </>
  );
}

function UserFacts({ user: u }: { user: UserView }) {
  return (
    <dl class="facts">
      <dt>{t('userType')}</dt>
      <dd>{u.human ? t('human') : t('machine')}</dd>
      <dt>{t('state')}</dt>
      <dd>{labelOf(u.state)}</dd>
      {u.human && (
        <>
          <dt>{t('displayName')}</dt>
          <dd>{u.human.profile.displayName}</dd>
          <dt>{t('email')}</dt>
          <dd>{u.human.email.email}</dd>
        </>
      )}
      {u.machine && (
        <>
          <dt>{t('name')}</dt>
          <dd>{u.machine.name}</dd>
          <dt>{t('description')}</dt>
          <dd>{u.machine.description}</dd>
        </>
      )}
      <dt>ID</dt>
      <dd>
        <code>{u.id}</code>
      </dd>
    </dl>
  );
}
