import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { Loading, SecretOnce, Status, useAction, useConsole, useLoad, useSubmit } from '../../components.tsx';
import { ConfirmButton } from '../../confirm.tsx';
import { formatDate, t } from '../../i18n.ts';
import type { CredentialView, IssuedMachineKey, IssuedMachineSecret, IssuedPat } from '../../views.ts';

// A machine user's credentials: its JSON keys and personal access tokens
// (listed, revoked, and new ones shown once), and a new client secret.

/** Keys or tokens, each revoked after a confirmation (`path`: where they are, by id). */
function CredentialList({ items, path, onRevoked }: { items: CredentialView[]; path: string; onRevoked: () => void }) {
  const { api } = useConsole();
  const revoke = useAction((id: string) => api.call('DELETE', `${path}/${id}`), onRevoked);
  if (items.length === 0) return <p class="empty">{t('noCredentials')}</p>;
  return (
    <>
      <ul class="plain items">
        {items.map((c) => (
          <li key={c.id}>
            <span>
              <code>{c.id}</code> — {formatDate(c.details.creationDate)} — {t('expires')}: {c.expirationDate ? formatDate(c.expirationDate) : t('never')}
            </span>
            <ConfirmButton label={t('revoke')} question={t('confirmRemove', { name: c.id })} onConfirm={() => void revoke.run(c.id)} disabled={revoke.busy} />
          </li>
        ))}
      </ul>
      <Status error={revoke.error} />
    </>
  );
}

export function MachineCredentials({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const keys = useLoad(() => api.call<{ result: CredentialView[] }>('GET', `/management/v1/users/${userId}/keys`), [orgId, userId]);
  const pats = useLoad(() => api.call<{ result: CredentialView[] }>('GET', `/management/v1/users/${userId}/pats`), [orgId, userId]);
  const [secret, setSecret] = useState<{ label: string; value: string; fileName: string }>();
  const newKey = useSubmit(
    () => api.call<IssuedMachineKey>('POST', `/management/v1/users/${userId}/keys`, { type: 'KEY_TYPE_JSON' }),
    (r) => {
      setSecret({ label: t('keyFile'), value: atob(r.keyDetails ?? ''), fileName: `${r.keyId}.json` });
      keys.reload();
    },
  );
  const newPat = useSubmit(
    () => api.call<IssuedPat>('POST', `/management/v1/users/${userId}/pats`, {}),
    (r) => {
      setSecret({ label: t('token'), value: r.token, fileName: `${r.tokenId}.pat` });
      pats.reload();
    },
  );
  const newSecret = useSubmit(
    () => api.call<IssuedMachineSecret>('PUT', `/management/v1/users/${userId}/secret`, {}),
    (r) =>
      setSecret({ label: t('clientSecret'), value: `${t('clientId')}: ${r.clientId}\n${t('clientSecret')}: ${r.clientSecret}`, fileName: `${r.clientId}.txt` }),
  );
  return (
    <>
      {secret && <SecretOnce {...secret} />}
      <Issuing id="keys-heading" title={t('keys')} action={t('newKey')} issue={newKey}>
        {keys.data ? (
          <CredentialList items={keys.data.result} path={`/management/v1/users/${userId}/keys`} onRevoked={keys.reload} />
        ) : (
          <Loading error={keys.error} />
        )}
      </Issuing>
      <Issuing id="pats-heading" title={t('pats')} action={t('newPat')} issue={newPat}>
        {pats.data ? (
          <CredentialList items={pats.data.result} path={`/management/v1/users/${userId}/pats`} onRevoked={pats.reload} />
        ) : (
          <Loading error={pats.error} />
        )}
      </Issuing>
      <Issuing id="secret-heading" title={t('clientSecret')} action={t('newSecret')} issue={newSecret} />
    </>
  );
}

/** A kind of credential: what there is, a button that issues a new one, and what went wrong. */
function Issuing({
  id,
  title,
  action,
  issue,
  children,
}: {
  id: string;
  title: string;
  action: string;
  issue: { submit: () => void; busy: boolean; error: unknown };
  children?: ComponentChildren;
}) {
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
      <button type="button" onClick={() => issue.submit()} disabled={issue.busy}>
        {action}
      </button>
      <Status error={issue.error} />
    </section>
  );
}
