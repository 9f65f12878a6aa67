import { useState } from 'preact/hooks';
import { searchPage } from '../api.ts';
import { Field, Heading, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { formatDate, t } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import { href } from '../router.ts';
import type { ProjectListItem } from '../views.ts';

// The projects of the acting org: searched, listed, and a new one (a
// project's own page: project.tsx).

const PAGE = 20;

const COLUMNS: Array<Column<ProjectListItem>> = [
  { header: t('name'), cell: (p) => <a href={href(`/projects/${p.id}`)}>{p.name}</a> },
  { header: 'ID', cell: (p) => <code>{p.id}</code> },
  { header: t('date'), cell: (p) => formatDate(p.details.creationDate) },
];

export function ProjectsPage() {
  const { api, orgId } = useConsole();
  const [text, setText] = useState('');
  const [name, setName] = useState('');
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const [newName, setNewName] = useState('');
  const [done, setDone] = useState('');
  const list = useLoad(
    () =>
      searchPage<ProjectListItem>(api, '/management/v1/projects/_search', offset, PAGE, {
        queries: name ? [{ nameQuery: { name, method: 'TEXT_QUERY_METHOD_CONTAINS_IGNORE_CASE' } }] : [],
      }),
    [orgId, name, offset],
  );
  const create = useSubmit(
    () => api.call('POST', '/management/v1/projects', { name: newName }),
    () => {
      setDone(`${t('created')} ${newName}`);
      setNewName('');
      setCreating(false);
      list.reload();
    },
  );
  return (
    <>
      <Heading>{t('projects')}</Heading>
      <div class="toolbar">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {t('newProject')}
        </button>
      </div>
      {creating && (
        <form noValidate class="panel" onSubmit={create.submit} aria-label={t('newProject')}>
          <Field label={t('name')} name="name" value={newName} onInput={setNewName} required violations={create.violations} />
          <div class="actions">
            <button type="submit" disabled={create.busy}>
              {t('create')}
            </button>
          </div>
          <Status error={create.error} />
        </form>
      )}
      <Status ok={done} />
      <form
        noValidate
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setName(text);
        }}
      >
        <Field label={t('searchProjects')} name="search" type="search" value={text} onInput={setText} />
        <button type="submit">{t('search')}</button>
      </form>
      <ResultTable
        caption={t('projects')}
        columns={COLUMNS}
        rowKey={(p) => p.id}
        list={list}
        paging={{ limit: PAGE, onMove: setOffset }}
        empty={t('noProjectsYet')}
      />
    </>
  );
}
