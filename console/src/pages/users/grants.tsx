import { useState } from 'preact/hooks';
import { searchAll } from '../../api.ts';
import { Field, Loading, Select, Status, commaList, useConsole, useLoad, useSubmit } from '../../components.tsx';
import { t } from '../../i18n.ts';
import type { ProjectListItem, UserGrantView } from '../../views.ts';

// A user's grants (roles of the org's projects), and granting more.

export function Grants({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const grants = useLoad(() => api.call<{ result: UserGrantView[] }>('GET', `/management/v1/users/${userId}/grants`), [orgId, userId]);
  const projects = useLoad(() => searchAll<ProjectListItem>(api, '/management/v1/projects/_search'), [orgId]);
  const [projectId, setProjectId] = useState('');
  const [roleKeys, setRoleKeys] = useState('');
  const [done, setDone] = useState('');
  const names = new Map((projects.data?.result ?? []).map((p) => [p.id, p.name]));
  const add = useSubmit(
    () =>
      api.call('POST', `/management/v1/users/${userId}/grants`, { projectId: projectId || projects.data?.result[0]?.id || '', roleKeys: commaList(roleKeys) }),
    () => {
      setDone(t('saved'));
      setRoleKeys('');
      grants.reload();
    },
  );
  return (
    <section aria-labelledby="grants-heading">
      <h2 id="grants-heading">{t('grants')}</h2>
      {grants.data ? (
        <ul class="plain">
          {grants.data.result.map((g) => (
            <li key={g.id}>
              {names.get(g.projectId) ?? g.projectId}: {g.roleKeys.join(', ')}
            </li>
          ))}
        </ul>
      ) : (
        <Loading error={grants.error} />
      )}
      {projects.data && projects.data.result.length > 0 && (
        <form noValidate class="inline" onSubmit={add.submit} aria-label={t('newGrant')}>
          <Select
            label={t('project')}
            value={projectId || (projects.data.result[0]?.id ?? '')}
            onChange={setProjectId}
            options={projects.data.result.map((p): [string, string] => [p.id, p.name])}
          />
          <Field label={t('roleKeys')} name="roleKeys" value={roleKeys} onInput={setRoleKeys} violations={add.violations} />
          <button type="submit" disabled={add.busy}>
            {t('newGrant')}
          </button>
          <Status ok={done} error={add.error} />
        </form>
      )}
    </section>
  );
}
