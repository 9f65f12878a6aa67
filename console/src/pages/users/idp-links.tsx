import { useState } from 'preact/hooks';
import { Status, useAction, useConsole, useLoad } from '../../components.tsx';
import { ConfirmButton } from '../../confirm.tsx';
import { t } from '../../i18n.ts';
import { ResultTable, type Column } from '../../result-table.tsx';
import type { IdpLink } from '../../views.ts';

// A user's identities at external providers (docs/api/idps.md, "A user's
// links"), each removed after a confirmation.

export function IdpLinks({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const links = useLoad(() => api.call<{ result: IdpLink[] }>('POST', `/management/v1/users/${userId}/links/_search`, {}), [orgId, userId]);
  const [done, setDone] = useState('');
  const removal = useAction(
    (link: IdpLink) => api.call('DELETE', `/management/v1/users/${userId}/links/${encodeURIComponent(link.idpId)}/${encodeURIComponent(link.providedUserId)}`),
    () => {
      setDone(t('removed'));
      links.reload();
    },
  );
  const columns: Array<Column<IdpLink>> = [
    { header: t('idpName'), cell: (l) => l.idpName },
    { header: t('providedUser'), cell: (l) => l.providedUserName || l.providedUserId },
    {
      header: t('remove'),
      cell: (l) => (
        <ConfirmButton
          label={t('remove')}
          question={t('confirmRemoveLink', { name: l.idpName })}
          onConfirm={() => {
            setDone('');
            void removal.run(l);
          }}
          disabled={removal.busy}
        />
      ),
    },
  ];
  return (
    <section aria-labelledby="links-heading">
      <h2 id="links-heading">{t('idpLinks')}</h2>
      <ResultTable caption={t('idpLinks')} columns={columns} rowKey={(l) => `${l.idpId}/${l.providedUserId}`} list={links} empty={t('noIdpLinks')} />
      <Status ok={done} error={removal.error} />
    </section>
  );
}
