import { useState } from 'preact/hooks';
import { Heading, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { formatDate, t } from '../i18n.ts';
import { ConfirmButton } from '../confirm.tsx';
import { ResultTable, type Column } from '../result-table.tsx';
import type { SigningKeyView } from '../views.ts';

// The published signing keys of the instance, and rotating them (IAM_OWNER).

const STATUS = { current: 'current', next: 'nextKey', previous: 'previousKey' } as const;

const COLUMNS: Array<Column<SigningKeyView>> = [
  { header: t('keyId'), cell: (k) => <code>{k.kid}</code> },
  { header: t('algorithm'), cell: (k) => k.alg },
  { header: t('status'), cell: (k) => t(STATUS[k.status]) },
  { header: t('activatesAt'), cell: (k) => formatDate(k.activatesAt) },
  { header: t('retiresAt'), cell: (k) => formatDate(k.retiresAt) },
];

export function SigningKeysPage() {
  const { api } = useConsole();
  const keys = useLoad(() => api.call<{ result: SigningKeyView[] }>('GET', '/admin/v1/signing_keys'), []);
  const [done, setDone] = useState('');
  const rotate = useSubmit(
    () => api.call('POST', '/admin/v1/signing_keys/_rotate', {}),
    () => {
      setDone(t('rotated'));
      keys.reload();
    },
  );
  return (
    <>
      <Heading>{t('signingKeys')}</Heading>
      <div class="toolbar">
        <ConfirmButton label={t('rotateKeys')} question={t('confirmRotate')} onConfirm={() => rotate.submit()} disabled={rotate.busy} kind="primary" />
      </div>
      <Status ok={done} error={rotate.error} />
      <ResultTable caption={t('signingKeys')} columns={COLUMNS} rowKey={(k) => k.kid} list={keys} />
    </>
  );
}
