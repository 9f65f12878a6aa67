import { useState } from 'preact/hooks';
import { searchPage, type Page } from '../api.ts';
import { Field, Heading, Loading, Pager, SecretOnce, Select, Status, commaList, useConsole, useLoad, useSubmit } from '../components.tsx';
import { formatDate, isMessageKey, t } from '../i18n.ts';
import { href, navigate } from '../router.ts';

// Users of the acting org: search with paging, creation (human or machine),
// and a user's page with its lock state, credentials and grants.

const PAGE = 20;

export interface User {
  id: string;
  state: string;
  userName: string;
  preferredLoginName: string;
  details: { creationDate: string };
  human?: { profile: { firstName: string; lastName: string; displayName: string }; email: { email: string } };
  machine?: { name: string; description: string; accessTokenType: string };
}

const label = (value: string) => (isMessageKey(value) ? t(value) : value);

export function UsersPage() {
  const { api, orgId } = useConsole();
  const [text, setText] = useState('');
  const [query, setQuery] = useState({ text: '', state: '', type: '' });
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const [done, setDone] = useState('');
  const list = useLoad(() => {
    const queries: object[] = [];
    if (query.text) queries.push({ userNameQuery: { userName: query.text, method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } });
    if (query.state) queries.push({ stateQuery: { state: query.state } });
    if (query.type) queries.push({ typeQuery: { type: query.type } });
    return searchPage<User>(api, '/management/v1/users/_search', offset, PAGE, { queries });
  }, [orgId, query, offset]);

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
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setOffset(0);
          setQuery({ ...query, text });
        }}
      >
        <Field label={t('searchUsers')} name="search" type="search" value={text} onInput={setText} />
        <Select
          label={t('state')}
          value={query.state}
          onChange={(state) => {
            setOffset(0);
            setQuery({ ...query, state });
          }}
          options={[
            ['', t('anyState')],
            ...(['USER_STATE_ACTIVE', 'USER_STATE_INACTIVE', 'USER_STATE_LOCKED'] as const).map((s): [string, string] => [s, t(s)]),
          ]}
        />
        <Select
          label={t('userType')}
          value={query.type}
          onChange={(type) => {
            setOffset(0);
            setQuery({ ...query, type });
          }}
          options={[
            ['', t('anyType')],
            ['TYPE_HUMAN', t('human')],
            ['TYPE_MACHINE', t('machine')],
          ]}
        />
        <button type="submit">{t('search')}</button>
      </form>
      {!list.data ? (
        <Loading error={list.error} />
      ) : (
        <>
          <table>
            <caption>{t('users')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('loginName')}</th>
                <th scope="col">{t('displayName')}</th>
                <th scope="col">{t('userType')}</th>
                <th scope="col">{t('state')}</th>
              </tr>
            </thead>
            <tbody>
              {list.data.result.map((user) => (
                <tr key={user.id}>
                  <td>
                    <a href={href(`/users/${user.id}`)}>{user.preferredLoginName}</a>
                  </td>
                  <td>{user.human?.profile.displayName ?? user.machine?.name}</td>
                  <td>{user.human ? t('human') : t('machine')}</td>
                  <td>{label(user.state)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data.result.length === 0 && <p>{t('none')}</p>}
          <Pager offset={list.data.offset} limit={PAGE} total={Number(list.data.details.totalResult)} onMove={setOffset} />
        </>
      )}
    </>
  );
}

function NewUser({ onCreated, onCancel }: { onCreated: (name: string) => void; onCancel: () => void }) {
  const { api } = useConsole();
  const [kind, setKind] = useState<'human' | 'machine'>('human');
  const [form, setForm] = useState({
    userName: '',
    email: '',
    firstName: '',
    lastName: '',
    password: '',
    name: '',
    description: '',
    accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER',
  });
  const set = (field: keyof typeof form) => (value: string) => setForm({ ...form, [field]: value });
  const { submit, busy, error, violations } = useSubmit(
    () =>
      kind === 'human'
        ? api.call('POST', '/management/v1/users/human', {
            userName: form.userName,
            profile: { firstName: form.firstName, lastName: form.lastName },
            email: { email: form.email },
            ...(form.password ? { password: form.password } : {}),
          })
        : api.call('POST', '/management/v1/users/machine', {
            userName: form.userName,
            name: form.name,
            description: form.description,
            accessTokenType: form.accessTokenType,
          }),
    () => onCreated(form.userName),
  );
  return (
    <form noValidate class="panel" onSubmit={submit} aria-label={t('newUser')}>
      <fieldset>
        <legend>{t('userType')}</legend>
        {(['human', 'machine'] as const).map((k) => (
          <label class="radio" key={k}>
            <input type="radio" name="kind" value={k} checked={kind === k} onChange={() => setKind(k)} /> {t(k)}
          </label>
        ))}
      </fieldset>
      <Field label={t('loginName')} name="userName" value={form.userName} onInput={set('userName')} required violations={violations} />
      {kind === 'human' ? (
        <>
          <Field
            label={t('email')}
            name="email"
            type="email"
            value={form.email}
            onInput={set('email')}
            required
            violations={violations}
            fields={['email.email']}
          />
          <Field
            label={t('firstName')}
            name="firstName"
            value={form.firstName}
            onInput={set('firstName')}
            required
            violations={violations}
            fields={['profile.firstName']}
          />
          <Field
            label={t('lastName')}
            name="lastName"
            value={form.lastName}
            onInput={set('lastName')}
            required
            violations={violations}
            fields={['profile.lastName']}
          />
          <Field
            label={t('password')}
            name="password"
            type="password"
            value={form.password}
            onInput={set('password')}
            help={t('passwordHelp')}
            violations={violations}
            autocomplete="new-password"
          />
        </>
      ) : (
        <>
          <Field label={t('name')} name="name" value={form.name} onInput={set('name')} required violations={violations} />
          <Field label={t('description')} name="description" value={form.description} onInput={set('description')} violations={violations} />
          <Select
            label={t('accessTokenType')}
            value={form.accessTokenType}
            onChange={set('accessTokenType')}
            options={[
              ['ACCESS_TOKEN_TYPE_BEARER', 'Bearer'],
              ['ACCESS_TOKEN_TYPE_JWT', 'JWT'],
            ]}
          />
        </>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('create')}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          {t('cancel')}
        </button>
      </div>
      <Status error={error} />
    </form>
  );
}

export function UserPage({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const user = useLoad(() => api.call<{ user: User }>('GET', `/management/v1/users/${userId}`).then((r) => r.user), [orgId, userId]);
  const [done, setDone] = useState('');
  const unlock = useSubmit(
    () => api.call('POST', `/management/v1/users/${userId}/_unlock`, {}),
    () => {
      setDone(t('unlocked'));
      user.reload();
    },
  );
  const removal = useSubmit(
    () => api.call('DELETE', `/management/v1/users/${userId}`),
    () => navigate('/users'),
  );
  if (!user.data) return <Loading error={user.error} />;
  const u = user.data;
  return (
    <>
      <Heading>{u.preferredLoginName}</Heading>
      <p>
        <a href={href('/users')}>{t('back')}</a>
      </p>
      <dl class="facts">
        <dt>{t('userType')}</dt>
        <dd>{u.human ? t('human') : t('machine')}</dd>
        <dt>{t('state')}</dt>
        <dd>{label(u.state)}</dd>
        {u.human && (
          <>
            <dt>{t('displayName')}</dt>
            <dd>{u.human.profile.displayName}</dd>
            <dt>{t('email')}</dt>
            <dd>{u.human.email.email}</dd>
          </>
        )}
        {u.machine && (
          <>
            <dt>{t('name')}</dt>
            <dd>{u.machine.name}</dd>
            <dt>{t('description')}</dt>
            <dd>{u.machine.description}</dd>
          </>
        )}
        <dt>ID</dt>
        <dd>
          <code>{u.id}</code>
        </dd>
      </dl>
      <section aria-labelledby="lock-heading">
        <h2 id="lock-heading">{t('lockState')}</h2>
        {u.state === 'USER_STATE_LOCKED' ? (
          <button type="button" onClick={() => unlock.submit()} disabled={unlock.busy}>
            {t('unlock')}
          </button>
        ) : (
          <p>{t('notLocked')}</p>
        )}
        <Status ok={done} error={unlock.error} />
      </section>
      {u.machine && <MachineCredentials userId={userId} />}
      <Grants userId={userId} />
      <section aria-labelledby="remove-heading" class="danger">
        <h2 id="remove-heading">{t('removeUser')}</h2>
        <button type="button" class="danger" onClick={() => confirm(t('confirmRemove', { name: u.preferredLoginName })) && removal.submit()}>
          {t('removeUser')}
        </button>
        <Status error={removal.error} />
      </section>
    </>
  );
}

interface Credential {
  id: string;
  expirationDate?: string;
  details: { creationDate: string };
}

function CredentialList({ items }: { items: Credential[] }) {
  return (
    <ul class="plain">
      {items.map((c) => (
        <li key={c.id}>
          <code>{c.id}</code> — {formatDate(c.details.creationDate)} — {t('expires')}: {c.expirationDate ? formatDate(c.expirationDate) : t('never')}
        </li>
      ))}
    </ul>
  );
}

function MachineCredentials({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const keys = useLoad(() => api.call<{ result: Credential[] }>('GET', `/management/v1/users/${userId}/keys`), [orgId, userId]);
  const pats = useLoad(() => api.call<{ result: Credential[] }>('GET', `/management/v1/users/${userId}/pats`), [orgId, userId]);
  const [secret, setSecret] = useState<{ label: string; value: string; fileName: string }>();
  const newKey = useSubmit(
    () => api.call<{ keyId: string; keyDetails: string }>('POST', `/management/v1/users/${userId}/keys`, { type: 'KEY_TYPE_JSON' }),
    (r) => {
      setSecret({ label: t('keyFile'), value: atob(r.keyDetails), fileName: `${r.keyId}.json` });
      keys.reload();
    },
  );
  const newPat = useSubmit(
    () => api.call<{ tokenId: string; token: string }>('POST', `/management/v1/users/${userId}/pats`, {}),
    (r) => {
      setSecret({ label: t('token'), value: r.token, fileName: `${r.tokenId}.pat` });
      pats.reload();
    },
  );
  const newSecret = useSubmit(
    () => api.call<{ clientId: string; clientSecret: string }>('PUT', `/management/v1/users/${userId}/secret`, {}),
    (r) =>
      setSecret({ label: t('clientSecret'), value: `${t('clientId')}: ${r.clientId}\n${t('clientSecret')}: ${r.clientSecret}`, fileName: `${r.clientId}.txt` }),
  );
  return (
    <>
      {secret && <SecretOnce {...secret} />}
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">{t('keys')}</h2>
        {keys.data ? <CredentialList items={keys.data.result} /> : <Loading error={keys.error} />}
        <button type="button" onClick={() => newKey.submit()} disabled={newKey.busy}>
          {t('newKey')}
        </button>
        <Status error={newKey.error} />
      </section>
      <section aria-labelledby="pats-heading">
        <h2 id="pats-heading">{t('pats')}</h2>
        {pats.data ? <CredentialList items={pats.data.result} /> : <Loading error={pats.error} />}
        <button type="button" onClick={() => newPat.submit()} disabled={newPat.busy}>
          {t('newPat')}
        </button>
        <Status error={newPat.error} />
      </section>
      <section aria-labelledby="secret-heading">
        <h2 id="secret-heading">{t('clientSecret')}</h2>
        <button type="button" onClick={() => newSecret.submit()} disabled={newSecret.busy}>
          {t('newSecret')}
        </button>
        <Status error={newSecret.error} />
      </section>
    </>
  );
}

function Grants({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const grants = useLoad(
    () => api.call<{ result: Array<{ id: string; projectId: string; roleKeys: string[] }> }>('GET', `/management/v1/users/${userId}/grants`),
    [orgId, userId],
  );
  const projects = useLoad(() => api.call<Page<{ id: string; name: string }>>('POST', '/management/v1/projects/_search', { query: { limit: 1000 } }), [orgId]);
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
