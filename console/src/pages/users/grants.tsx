import { useState } from 'preact/hooks';
import { searchAll } from '../../api.ts';
import { Check, Loading, Select, Status, useAction, useConsole, useLoad, useSubmit } from '../../components.tsx';
import { ConfirmButton } from '../../confirm.tsx';
import { t } from '../../i18n.ts';
import type { ProjectListItem, ProjectView, UserGrantView } from '../../views.ts';

// A user's grants (roles of the org's projects): each listed with its
// project's roles to tick and save, or removed after a confirmation; and
// granting the roles of another project.

type Role = ProjectView['roles'][number];

function RoleChecks({ roles, chosen, onChange }: { roles: Role[]; chosen: string[]; onChange: (keys: string[]) => void }) {
  return (
    <>
      {roles.map((role) => (
        <Check
          key={role.roleKey}
          label={role.displayName ? `${role.displayName} (${role.roleKey})` : role.roleKey}
          checked={chosen.includes(role.roleKey)}
          onChange={(on) => onChange(on ? [...chosen, role.roleKey] : chosen.filter((k) => k !== role.roleKey))}
        />
      ))}
    </>
  );
}

function useProjectRoles(projectId: string) {
  const { api, orgId } = useConsole();
  return useLoad(
    () => (projectId ? api.call<{ project: ProjectView }>('GET', `/management/v1/projects/${projectId}`).then((r) => r.project.roles) : Promise.resolve([])),
    [orgId, projectId],
  );
}

function GrantRow({ userId, grant, projectName, onChanged }: { userId: string; grant: UserGrantView; projectName: string; onChanged: () => void }) {
  const { api } = useConsole();
  const roles = useProjectRoles(grant.projectId);
  const [chosen, setChosen] = useState(grant.roleKeys);
  const [done, setDone] = useState('');
  const path = `/management/v1/users/${userId}/grants/${grant.id}`;
  const save = useSubmit(
    () => api.call('PUT', path, { roleKeys: chosen }),
    () => {
      setDone(t('saved'));
      onChanged();
    },
  );
  const removal = useAction(() => api.call('DELETE', path), onChanged);
  return (
    <li>
      <form noValidate onSubmit={save.submit} aria-label={t('grantRoles', { project: projectName })}>
        <fieldset>
          <legend>{t('grantRoles', { project: projectName })}</legend>
          {roles.data ? <RoleChecks roles={roles.data} chosen={chosen} onChange={setChosen} /> : <Loading error={roles.error} />}
        </fieldset>
        <div class="row-actions">
          <button type="submit" disabled={save.busy}>
            {t('changeRoles')}
          </button>
          <ConfirmButton
            label={t('removeGrant')}
            question={t('confirmRemove', { name: t('grantRoles', { project: projectName }) })}
            onConfirm={() => void removal.run(undefined)}
            disabled={removal.busy}
          />
        </div>
        <Status ok={done} error={save.error ?? removal.error} />
      </form>
    </li>
  );
}

function NewGrant({ userId, projects, onAdded }: { userId: string; projects: ProjectListItem[]; onAdded: () => void }) {
  const { api } = useConsole();
  const [projectId, setProjectId] = useState(projects[0]?.id ?? '');
  const roles = useProjectRoles(projectId);
  const [chosen, setChosen] = useState<string[]>([]);
  const [done, setDone] = useState('');
  const add = useSubmit(
    () => api.call('POST', `/management/v1/users/${userId}/grants`, { projectId, roleKeys: chosen }),
    () => {
      setDone(t('saved'));
      setChosen([]);
      onAdded();
    },
  );
  return (
    <form noValidate class="panel" onSubmit={add.submit} aria-label={t('newGrant')}>
      <Select
        label={t('project')}
        value={projectId}
        onChange={(id) => {
          setProjectId(id);
          setChosen([]);
        }}
        options={projects.map((p): [string, string] => [p.id, p.name])}
      />
      <fieldset>
        <legend>{t('roles')}</legend>
        {roles.data ? (
          roles.data.length ? (
            <RoleChecks roles={roles.data} chosen={chosen} onChange={setChosen} />
          ) : (
            <p>{t('noRoles')}</p>
          )
        ) : (
          <Loading error={roles.error} />
        )}
      </fieldset>
      <button type="submit" disabled={add.busy}>
        {t('newGrant')}
      </button>
      <Status ok={done} error={add.error} />
    </form>
  );
}

export function Grants({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const grants = useLoad(() => api.call<{ result: UserGrantView[] }>('GET', `/management/v1/users/${userId}/grants`), [orgId, userId]);
  const projects = useLoad(() => searchAll<ProjectListItem>(api, '/management/v1/projects/_search'), [orgId]);
  const names = new Map((projects.data?.result ?? []).map((p) => [p.id, p.name]));
  return (
    <section aria-labelledby="grants-heading">
      <h2 id="grants-heading">{t('grants')}</h2>
      {!grants.data ? (
        <Loading error={grants.error} />
      ) : grants.data.result.length === 0 ? (
        <p class="empty">{t('noGrants')}</p>
      ) : (
        <ul class="plain grants">
          {grants.data.result.map((g) => (
            <GrantRow key={g.id} userId={userId} grant={g} projectName={names.get(g.projectId) ?? g.projectId} onChanged={grants.reload} />
          ))}
        </ul>
      )}
      {projects.data && projects.data.result.length > 0 && <NewGrant userId={userId} projects={projects.data.result} onAdded={grants.reload} />}
    </section>
  );
}
