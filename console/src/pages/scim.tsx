import { useState } from 'preact/hooks';
import { searchPage } from '../api.ts';
import { Field, Heading, SecretOnce, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { CopyText } from '../copy-text.tsx';
import { labelOf, t } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import type { CreatedMachine, IssuedPat, MemberView } from '../views.ts';

// SCIM provisioning of the acting org (docs/scim.md): the base URL to enter
// in the client, the org's provisioning users (machine users allowed to
// manage its users), and a new one with its token, shown once. A new
// provisioning user is a machine user, an ORG_USER_MANAGER membership and a
// personal access token: three calls, and a user whose membership or token
// could not be made is removed again, so a failure leaves nothing behind.

const PROVISIONING_ROLES = ['ORG_USER_MANAGER', 'ORG_OWNER'];
const MEMBERS_PATH = '/management/v1/orgs/me/members';

const isProvisioning = (m: MemberView) => m.userType === 'TYPE_MACHINE' && m.roles.some((role) => PROVISIONING_ROLES.includes(role));

const COLUMNS: Array<Column<MemberView>> = [
  { header: t('loginName'), cell: (m) => m.preferredLoginName },
  { header: t('displayName'), cell: (m) => m.displayName },
  { header: t('roles'), cell: (m) => m.roles.map(labelOf).join(', ') },
];

export function ScimPage() {
  const { api, orgId, issuer } = useConsole();
  const [userName, setUserName] = useState('scim-provisioning');
  const [issued, setIssued] = useState<{ loginName: string; token: string }>();
  const members = useLoad(async () => {
    const page = await searchPage<MemberView>(api, `${MEMBERS_PATH}/_search`, 0, 1000);
    return { result: page.result.filter(isProvisioning) };
  }, [orgId]);
  const create = useSubmit(
    async () => {
      const name = userName.trim();
      const machine = await api.call<CreatedMachine>('POST', '/management/v1/users/machine', { userName: name, name: t('scimUserName') });
      try {
        await api.call('POST', MEMBERS_PATH, { userId: machine.userId, roles: ['ORG_USER_MANAGER'] });
        const pat = await api.call<IssuedPat>('POST', `/management/v1/users/${machine.userId}/pats`, {});
        return { loginName: name, token: pat.token };
      } catch (err) {
        await api.call('DELETE', `/management/v1/users/${machine.userId}`).catch(() => {});
        throw err;
      }
    },
    (made) => {
      setIssued(made);
      members.reload();
    },
  );
  return (
    <>
      <Heading>{t('scim')}</Heading>
      <CopyText label={t('scimBaseUrl')} value={`${issuer}/scim/v2/${orgId}`} help={t('scimBaseUrlHelp')} />
      <section aria-labelledby="scim-users-heading">
        <h2 id="scim-users-heading">{t('scimUsers')}</h2>
        <ResultTable caption={t('scimUsers')} columns={COLUMNS} rowKey={(m) => m.userId} list={members} empty={t('noScimUsers')} />
        <form noValidate class="panel" onSubmit={create.submit} aria-label={t('newScimUser')}>
          <p class="help">{t('newScimUserHelp')}</p>
          <Field label={t('userName')} name="userName" value={userName} onInput={setUserName} required violations={create.violations} />
          <div class="actions">
            <button type="submit" disabled={create.busy || !userName.trim()}>
              {t('newScimUser')}
            </button>
          </div>
          <Status error={create.error} />
        </form>
        {issued && <SecretOnce label={t('scimToken', { name: issued.loginName })} value={issued.token} fileName="scim-token.txt" />}
      </section>
    </>
  );
}
