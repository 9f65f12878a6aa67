import { useState } from 'preact/hooks';
import { Loading, Status, useAction, useConsole, useLoad } from '../../components.tsx';
import { ConfirmButton } from '../../confirm.tsx';
import { formatDate, labelOf, t } from '../../i18n.ts';
import { ResultTable, type Column } from '../../result-table.tsx';
import type { AuthFactorView, UserSessionView, UserView } from '../../views.ts';

// A user's security state (docs/api/users.md): its state and the changes it
// allows (lock, unlock, deactivate, reactivate), its second factors and
// passkeys (removed after a confirmation), and where it is signed in.

export function StateChanges({ user, onChanged }: { user: UserView; onChanged: () => void }) {
  const { api } = useConsole();
  const [done, setDone] = useState('');
  const change = useAction(
    (path: string) => api.call('POST', `/management/v1/users/${user.id}/${path}`, {}),
    (_, path) => {
      setDone(path === '_unlock' ? t('unlocked') : t('saved'));
      onChanged();
    },
  );
  const run = (path: string) => {
    setDone('');
    void change.run(path);
  };
  const name = user.preferredLoginName;
  return (
    <section aria-labelledby="lock-heading">
      <h2 id="lock-heading">{t('lockState')}</h2>
      <p>
        {t('state')}: <strong>{labelOf(user.state)}</strong>
      </p>
      <div class="row-actions">
        {user.state === 'USER_STATE_LOCKED' && (
          <button type="button" onClick={() => run('_unlock')} disabled={change.busy}>
            {t('unlock')}
          </button>
        )}
        {user.state === 'USER_STATE_ACTIVE' && (
          <ConfirmButton label={t('lock')} question={t('confirmLock', { name })} onConfirm={() => run('_lock')} disabled={change.busy} kind="secondary" />
        )}
        {user.state === 'USER_STATE_INACTIVE' ? (
          <button type="button" onClick={() => run('_reactivate')} disabled={change.busy}>
            {t('reactivate')}
          </button>
        ) : (
          <ConfirmButton label={t('deactivate')} question={t('confirmDeactivate', { name })} onConfirm={() => run('_deactivate')} disabled={change.busy} />
        )}
      </div>
      {user.state !== 'USER_STATE_LOCKED' && <p>{t('notLocked')}</p>}
      <Status ok={done} error={change.error} />
    </section>
  );
}

/** The removal path of each factor that is not a passkey. */
const FACTOR_PATHS: Record<string, string> = { otp: 'otp', otpEmail: 'otp_email', otpSms: 'otp_sms' };

export function Factors({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const factors = useLoad(() => api.call<{ result: AuthFactorView[] }>('GET', `/management/v1/users/${userId}/auth_factors`), [orgId, userId]);
  const removal = useAction(
    (id: string) =>
      api.call(
        'DELETE',
        FACTOR_PATHS[id] ? `/management/v1/users/${userId}/auth_factors/${FACTOR_PATHS[id]}` : `/management/v1/users/${userId}/passkeys/${id}`,
      ),
    () => factors.reload(),
  );
  const remove = (id: string) => void removal.run(id);
  return (
    <section aria-labelledby="factors-heading">
      <h2 id="factors-heading">{t('factors')}</h2>
      {!factors.data ? (
        <Loading error={factors.error} />
      ) : factors.data.result.length === 0 ? (
        <p class="empty">{t('noFactors')}</p>
      ) : (
        <ul class="plain items">
          {factors.data.result.map((f) => {
            const id = 'u2f' in f ? f.u2f.id : 'otp' in f ? 'otp' : 'otpEmail' in f ? 'otpEmail' : 'otpSms';
            const name = 'u2f' in f ? t('passkey', { name: f.u2f.name }) : 'otp' in f ? t('otpApp') : 'otpEmail' in f ? t('otpEmailCodes') : t('otpSmsCodes');
            return (
              <li key={id}>
                <span>
                  {name} {f.state === 'AUTH_FACTOR_STATE_NOT_READY' && <span class="badge">({t('notReady')})</span>}
                </span>
                {/* An app whose set-up is not finished is the user's own business until it is; codes wait for a verified address. */}
                {(f.state === 'AUTH_FACTOR_STATE_READY' || id === 'otpEmail' || id === 'otpSms') && (
                  <ConfirmButton label={t('remove')} question={t('confirmRemove', { name })} onConfirm={() => remove(id)} disabled={removal.busy} />
                )}
              </li>
            );
          })}
        </ul>
      )}
      <Status error={removal.error} />
    </section>
  );
}

export function Sessions({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const sessions = useLoad(() => api.call<{ result: UserSessionView[] }>('GET', `/management/v1/users/${userId}/sessions`), [orgId, userId]);
  const [done, setDone] = useState('');
  const end = useAction(
    (id: string | undefined) => api.call('DELETE', `/management/v1/users/${userId}/sessions${id ? `/${id}` : ''}`),
    () => {
      setDone(t('sessionEnded'));
      sessions.reload();
    },
  );
  const endOne = (id?: string) => void end.run(id);
  const columns: Array<Column<UserSessionView>> = [
    { header: t('signedInAt'), cell: (s) => formatDate(s.creationDate) },
    { header: t('lastActive'), cell: (s) => formatDate(s.lastActiveDate) },
    { header: t('methods'), cell: (s) => s.amr.join(', ') },
    {
      header: t('endSession'),
      cell: (s) => (
        <ConfirmButton label={t('endSession')} question={t('confirmEndSession')} onConfirm={() => endOne(s.id)} disabled={end.busy} kind="secondary" />
      ),
    },
  ];
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">{t('sessions')}</h2>
      <ResultTable caption={t('sessions')} columns={columns} rowKey={(s) => s.id} list={sessions} empty={t('noSessions')} />
      {(sessions.data?.result.length ?? 0) > 1 && (
        <ConfirmButton label={t('endAllSessions')} question={t('confirmEndSession')} onConfirm={() => endOne()} disabled={end.busy} kind="secondary" />
      )}
      <Status ok={done} error={end.error} />
    </section>
  );
}
