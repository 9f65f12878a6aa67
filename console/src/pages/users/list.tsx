import { useState } from 'preact/hooks';
import { searchPage } from '../../api.ts';
import { Field, Heading, Select, Status, useConsole, useLoad } from '../../components.tsx';
import { labelOf, t } from '../../i18n.ts';
import { ResultTable, type Column } from '../../result-table.tsx';
import { href } from '../../router.ts';
import type { UserView } from '../../views.ts';
import { NewUser } from './new-user.tsx';

// Users of the acting org: search by login name, state and type, with
// paging; the form for a new user opens above the list.

const PAGE = 20;

interface UserFilter {
  text: string;
  state: string;
  type: string;
}

function queriesOf(filter: UserFilter): object[] {
  const queries: object[] = [];
  if (filter.text) queries.push({ userNameQuery: { userName: filter.text, method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } });
  if (filter.state) queries.push({ stateQuery: { state: filter.state } });
  if (filter.type) queries.push({ typeQuery: { type: filter.type } });
  return queries;
}

const COLUMNS: Array<Column<UserView>> = [
  { header: t('loginName'), cell: (user) => <a href={href(`/users/${user.id}`)}>{user.preferredLoginName}</a> },
  { header: t('displayName'), cell: (user) => user.human?.profile.displayName ?? user.machine?.name },
  { header: t('userType'), cell: (user) => (user.human ? t('human') : t('machine')) },
  { header: t('state'), cell: (user) => labelOf(user.state) },
];

export function UsersPage() {
  const { api, orgId } = useConsole();
  const [filter, setFilter] = useState<UserFilter>({ text: '', state: '', type: '' });
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const [done, setDone] = useState('');
  const list = useLoad(() => searchPage<UserView>(api, '/management/v1/users/_search', offset, PAGE, { queries: queriesOf(filter) }), [orgId, filter, offset]);
  const search = (changed: Partial<UserFilter>) => {
    setOffset(0);
    setFilter({ ...filter, ...changed });
  };
  return (
    <>
      <Heading>{t('users')}</Heading>
      <div class="toolbar">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {t('newUser')}
        </button>
      </div>
      {creating && (
        <NewUser
          onCreated={(name) => {
            setCreating(false);
            setDone(`${t('created')} ${name}`);
            list.reload();
          }}
          onCancel={() => setCreating(false)}
        />
      )}
      <Status ok={done} />
      <UserFilters filter={filter} onSearch={search} />
      <ResultTable
        caption={t('users')}
        columns={COLUMNS}
        rowKey={(user) => user.id}
        list={list}
        paging={{ limit: PAGE, onMove: setOffset }}
        empty={t('noUsers')}
      />
    </>
  );
}

/** The login name is searched when the form is sent; state and type apply when chosen. */
function UserFilters({ filter, onSearch }: { filter: UserFilter; onSearch: (changed: Partial<UserFilter>) => void }) {
  const [text, setText] = useState(filter.text);
  return (
    <form
      class="filters"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch({ text });
      }}
    >
      <Field label={t('searchUsers')} name="search" type="search" value={text} onInput={setText} />
      <Select
        label={t('state')}
        value={filter.state}
        onChange={(state) => onSearch({ state })}
        options={[['', t('anyState')], ...(['USER_STATE_ACTIVE', 'USER_STATE_INACTIVE', 'USER_STATE_LOCKED'] as const).map((s): [string, string] => [s, t(s)])]}
      />
      <Select
        label={t('userType')}
        value={filter.type}
        onChange={(type) => onSearch({ type })}
        options={[
          ['', t('anyType')],
          ['TYPE_HUMAN', t('human')],
          ['TYPE_MACHINE', t('machine')],
        ]}
      />
      <button type="submit">{t('search')}</button>
    </form>
  );
}
