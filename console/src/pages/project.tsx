import { useState } from 'preact/hooks';
import { Field, Heading, Loading, Status, useAction, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { t } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import { href, navigate } from '../router.ts';
import type { ProjectView } from '../views.ts';

// A project's page: its name (changed), its roles (added, renamed,
// removed after a confirmation), its apps, and removing it.

type Role = ProjectView['roles'][number];

function RoleName({ path, role, onSaved }: { path: string; role: Role; onSaved: () => void }) {
  const { api } = useConsole();
  const [name, setName] = useState(role.displayName);
  const save = useSubmit(() => api.call('PUT', `${path}/roles/${encodeURIComponent(role.roleKey)}`, { displayName: name }), onSaved);
  return (
    <form noValidate class="inline compact" onSubmit={save.submit} aria-label={`${t('displayName')}: ${role.roleKey}`}>
      <Field label={`${t('displayName')}: ${role.roleKey}`} name="displayName" value={name} onInput={setName} required violations={save.violations} />
      <button type="submit" class="secondary" disabled={save.busy || name === role.displayName}>
        {t('save')}
      </button>
      <Status error={save.error} />
    </form>
  );
}

function Roles({ path, roles, onChanged }: { path: string; roles: Role[]; onChanged: () => void }) {
  const { api } = useConsole();
  const [role, setRole] = useState({ roleKey: '', displayName: '' });
  const [done, setDone] = useState('');
  const add = useSubmit(
    () => api.call('POST', `${path}/roles`, role),
    () => {
      setDone(t('saved'));
      setRole({ roleKey: '', displayName: '' });
      onChanged();
    },
  );
  const removal = useAction((roleKey: string) => api.call('DELETE', `${path}/roles/${encodeURIComponent(roleKey)}`), onChanged);
  const columns: Array<Column<Role>> = [
    { header: t('roleKey'), cell: (r) => <code>{r.roleKey}</code> },
    { header: t('displayName'), cell: (r) => <RoleName path={path} role={r} onSaved={onChanged} /> },
    {
      header: t('removeRole'),
      cell: (r) => (
        <ConfirmButton
          label={t('removeRole')}
          question={t('confirmRemove', { name: r.roleKey })}
          onConfirm={() => void removal.run(r.roleKey)}
          disabled={removal.busy}
        />
      ),
    },
  ];
  return (
    <section aria-labelledby="roles-heading">
      <h2 id="roles-heading">{t('roles')}</h2>
      <ResultTable caption={t('roles')} columns={columns} rowKey={(r) => r.roleKey} list={{ data: { result: roles } }} empty={t('noRoles')} />
      <Status error={removal.error} />
      <form noValidate class="inline" onSubmit={add.submit} aria-label={t('newRole')}>
        <Field
          label={t('roleKey')}
          name="roleKey"
          value={role.roleKey}
          onInput={(roleKey) => setRole({ ...role, roleKey })}
          required
          violations={add.violations}
        />
        <Field
          label={t('displayName')}
          name="displayName"
          value={role.displayName}
          onInput={(displayName) => setRole({ ...role, displayName })}
          violations={add.violations}
        />
        <button type="submit" disabled={add.busy}>
          {t('newRole')}
        </button>
        <Status ok={done} error={add.error} />
      </form>
    </section>
  );
}

function ProjectName({ path, name, onSaved }: { path: string; name: string; onSaved: () => void }) {
  const { api } = useConsole();
  const [value, setValue] = useState(name);
  const [done, setDone] = useState('');
  const save = useSubmit(
    () => api.call('PUT', path, { name: value }),
    () => {
      setDone(t('saved'));
      onSaved();
    },
  );
  return (
    <form noValidate class="inline" onSubmit={save.submit} aria-label={t('editProject')}>
      <Field label={t('name')} name="name" value={value} onInput={setValue} required violations={save.violations} />
      <button type="submit" disabled={save.busy}>
        {t('save')}
      </button>
      <Status ok={done} error={save.error} />
    </form>
  );
}

export function ProjectPage({ projectId }: { projectId: string }) {
  const { api, orgId } = useConsole();
  const path = `/management/v1/projects/${projectId}`;
  const project = useLoad(() => api.call<{ project: ProjectView }>('GET', path), [orgId, projectId]);
  const removal = useSubmit(
    () => api.call('DELETE', path),
    () => navigate('/projects'),
  );
  if (!project.data) return <Loading error={project.error} />;
  const p = project.data.project;
  return (
    <>
      <Heading>{p.name}</Heading>
      <p>
        <a href={href('/projects')}>{t('back')}</a> · <a href={href(`/apps?project=${p.id}`)}>{t('appsOfProject')}</a>
      </p>
      <ProjectName path={path} name={p.name} onSaved={project.reload} />
      <Roles path={path} roles={p.roles} onChanged={project.reload} />
      <section aria-labelledby="remove-project-heading" class="danger">
        <h2 id="remove-project-heading">{t('removeProject')}</h2>
        <ConfirmButton label={t('removeProject')} question={t('confirmRemove', { name: p.name })} onConfirm={() => removal.submit()} disabled={removal.busy} />
        <Status error={removal.error} />
      </section>
    </>
  );
}
