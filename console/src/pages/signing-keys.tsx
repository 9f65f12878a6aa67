import { useState } from 'preact/hooks';
import { Heading, Loading, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { formatDate, t } from '../i18n.ts';

// The published signing keys of the instance, and rotating them (IAM_OWNER).

interface SigningKey {
  kid: string;
  alg: string;
  status: 'current' | 'next' | 'previous';
  activatesAt: string;
  retiresAt: string | null;
}

const STATUS = { current: 'current', next: 'nextKey', previous: 'previousKey' } as const;

export function SigningKeysPage() {
  const { api } = useConsole();
  const keys = useLoad(() => api.call<{ result: SigningKey[] }>('GET', '/admin/v1/signing_keys'), []);
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
        <button type="button" onClick={() => rotate.submit()} disabled={rotate.busy}>
          {t('rotateKeys')}
        </button>
      </div>
      <Status ok={done} error={rotate.error} />
      {!keys.data ? (
        <Loading error={keys.error} />
      ) : (
        <table>
          <caption>{t('signingKeys')}</caption>
          <thead>
            <tr>
              <th scope="col">{t('keyId')}</th>
              <th scope="col">{t('algorithm')}</th>
              <th scope="col">{t('status')}</th>
              <th scope="col">{t('activatesAt')}</th>
              <th scope="col">{t('retiresAt')}</th>
            </tr>
          </thead>
          <tbody>
            {keys.data.result.map((k) => (
              <tr key={k.kid}>
                <td>
                  <code>{k.kid}</code>
                </td>
                <td>{k.alg}</td>
                <td>{t(STATUS[k.status])}</td>
                <td>{formatDate(k.activatesAt)}</td>
                <td>{formatDate(k.retiresAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
