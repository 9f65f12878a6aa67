import { useState } from 'preact/hooks';
import { Field, Heading, Status, useAction, useConsole, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { t } from '../i18n.ts';
import { navigate } from '../router.ts';
import type { OrgView } from '../views.ts';

// The acting org (docs/api/orgs.md): renaming it, deactivating and
// reactivating it (instance owners, who see its state), and a new org,
// which the caller owns and the console moves into.

function Rename({ name, onRenamed }: { name: string; onRenamed: () => void }) {
  const { api } = useConsole();
  const [value, setValue] = useState(name);
  const [done, setDone] = useState('');
  const save = useSubmit(
    () => api.call('PUT', '/management/v1/orgs/me', { name: value }),
    () => {
      setDone(t('saved'));
      onRenamed();
    },
  );
  return (
    <form noValidate class="panel" onSubmit={save.submit} aria-label={t('rename')}>
      <Field label={t('orgName')} name="name" value={value} onInput={setValue} required violations={save.violations} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {t('rename')}
        </button>
      </div>
      <Status ok={done} error={save.error} />
    </form>
  );
}

function NewOrg({ onCreated }: { onCreated: () => void }) {
  const { api } = useConsole();
  const [name, setName] = useState('');
  const create = useSubmit(
    () => api.call<{ id: string }>('POST', '/management/v1/orgs', { name }),
    (created) => {
      onCreated();
      navigate('/org', false, created.id);
    },
  );
  return (
    <form noValidate class="panel" onSubmit={create.submit} aria-labelledby="new-org-heading">
      <h2 id="new-org-heading">{t('newOrg')}</h2>
      <Field label={t('orgName')} name="newOrgName" value={name} onInput={setName} required violations={create.violations} fields={['name']} />
      <div class="actions">
        <button type="submit" disabled={create.busy}>
          {t('create')}
        </button>
      </div>
      <Status error={create.error} />
    </form>
  );
}

function OrgState({ org, onChanged }: { org: OrgView; onChanged: () => void }) {
  const { api } = useConsole();
  const change = useAction((path: string) => api.call('POST', `/management/v1/orgs/me/${path}`, {}), onChanged);
  const inactive = org.state === 'ORG_STATE_INACTIVE';
  return (
    <section aria-labelledby="org-state-heading">
      <h2 id="org-state-heading">{t('state')}</h2>
      {inactive ? (
        <>
          <p>{t('orgInactive')}</p>
          <button type="button" onClick={() => void change.run('_reactivate')} disabled={change.busy}>
            {t('reactivateOrg')}
          </button>
        </>
      ) : (
        <ConfirmButton
          label={t('deactivateOrg')}
          question={t('confirmDeactivateOrg', { name: org.name })}
          onConfirm={() => void change.run('_deactivate')}
          disabled={change.busy}
        />
      )}
      <Status error={change.error} />
    </section>
  );
}

export function OrgPage() {
  const { org, reloadOrgs } = useConsole();
  return (
    <>
      <Heading>{org?.name ?? t('orgSettings')}</Heading>
      <Rename key={org ? 'known' : 'unknown'} name={org?.name ?? ''} onRenamed={reloadOrgs} />
      {org && <OrgState org={org} onChanged={reloadOrgs} />}
      <NewOrg onCreated={reloadOrgs} />
    </>
  );
}
