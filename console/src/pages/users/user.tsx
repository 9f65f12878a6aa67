import { useState } from 'preact/hooks';
import { Heading, Loading, Status, useConsole, useLoad, useSubmit } from '../../components.tsx';
import { labelOf, t } from '../../i18n.ts';
import { href, navigate } from '../../router.ts';
import type { UserView } from '../../views.ts';
import { Grants } from './grants.tsx';
import { MachineCredentials } from './machine-credentials.tsx';

// A user's page: who it is, its lock state (and unlocking), a machine
// user's credentials, its grants, and removing it.

export function UserPage({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const user = useLoad(() => api.call<{ user: UserView }>('GET', `/management/v1/users/${userId}`).then((r) => r.user), [orgId, userId]);
  const [done, setDone] = useState('');
  const unlock = useSubmit(
    () => api.call('POST', `/management/v1/users/${userId}/_unlock`, {}),
    () => {
      setDone(t('unlocked'));
      user.reload();
    },
  );
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
      <section aria-labelledby="lock-heading">
        <h2 id="lock-heading">{t('lockState')}</h2>
        {u.state === 'USER_STATE_LOCKED' ? (
          <button type="button" onClick={() => unlock.submit()} disabled={unlock.busy}>
            {t('unlock')}
          </button>
        ) : (
          <p>{t('notLocked')}</p>
        )}
        <Status ok={done} error={unlock.error} />
      </section>
      {u.machine && <MachineCredentials userId={userId} />}
      <Grants userId={userId} />
      <section aria-labelledby="remove-heading" class="danger">
        <h2 id="remove-heading">{t('removeUser')}</h2>
        <button type="button" class="danger" onClick={() => confirm(t('confirmRemove', { name: u.preferredLoginName })) && removal.submit()}>
          {t('removeUser')}
        </button>
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
