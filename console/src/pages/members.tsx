import { useState } from 'preact/hooks';
import { Check, Field, Heading, Status, useConsole, useSubmit } from '../components.tsx';
import { t } from '../i18n.ts';

// Role memberships: in the acting org, and (instance owners) on the instance.

const ORG_ROLES = ['ORG_OWNER', 'ORG_USER_MANAGER', 'ORG_END_USER_IMPERSONATOR'];
const INSTANCE_ROLES = ['IAM_OWNER', 'IAM_END_USER_IMPERSONATOR'];

function MemberForm({ title, path, roles }: { title: string; path: string; roles: string[] }) {
  const { api } = useConsole();
  const [userId, setUserId] = useState('');
  const [chosen, setChosen] = useState<string[]>([]);
  const [done, setDone] = useState('');
  const add = useSubmit(
    () => api.call('POST', path, { userId, roles: chosen }),
    () => {
      setDone(t('memberAdded'));
      setUserId('');
      setChosen([]);
    },
  );
  return (
    <form noValidate class="panel" onSubmit={add.submit} aria-label={title}>
      <h2>{title}</h2>
      <Field label={t('userId')} name="userId" value={userId} onInput={setUserId} required violations={add.violations} />
      <fieldset>
        <legend>{t('roles')}</legend>
        {roles.map((role) => (
          <Check
            key={role}
            label={role}
            checked={chosen.includes(role)}
            onChange={(on) => setChosen(on ? [...chosen, role] : chosen.filter((r) => r !== role))}
          />
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" disabled={add.busy}>
          {t('create')}
        </button>
      </div>
      <Status ok={done} error={add.error} />
    </form>
  );
}

export function MembersPage() {
  const { iamOwner } = useConsole();
  return (
    <>
      <Heading>{t('members')}</Heading>
      <p>{t('membersNote')}</p>
      <MemberForm title={t('addOrgMember')} path="/management/v1/orgs/me/members" roles={ORG_ROLES} />
      {iamOwner && <MemberForm title={t('addInstanceMember')} path="/admin/v1/members" roles={INSTANCE_ROLES} />}
    </>
  );
}
