import { useState } from 'preact/hooks';
import { ApiError, searchPage } from '../api.ts';
import { signedInUserId } from '../auth.ts';
import { Check, Field, Heading, message, Status, useAction, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { labelOf, t } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import type { MemberView, UserView } from '../views.ts';

// Role memberships, in the acting org and (instance owners) on the
// instance: listed by name, removed after a confirmation, added by
// finding the user by login name, never by pasting an id, and their roles
// changed (users giving up their own owner role are asked first).

const ORG_ROLES = ['ORG_OWNER', 'ORG_USER_MANAGER', 'ORG_END_USER_IMPERSONATOR'];
const INSTANCE_ROLES = ['IAM_OWNER', 'IAM_END_USER_IMPERSONATOR'];
const PAGE = 20;
/** How many users the login-name search offers at once. */
const MATCHES = 5;

/** A user of the acting org found by the start of its login name. */
function UserFinder({ chosen, onChoose }: { chosen?: UserView; onChoose: (user?: UserView) => void }) {
  const { api } = useConsole();
  const [text, setText] = useState('');
  const [matches, setMatches] = useState<UserView[]>();
  const find = useSubmit(
    () =>
      searchPage<UserView>(api, '/management/v1/users/_search', 0, MATCHES, {
        queries: [{ userNameQuery: { userName: text.split('@')[0]!.trim(), method: 'TEXT_QUERY_METHOD_STARTS_WITH_IGNORE_CASE' } }],
      }),
    (page) => setMatches(page.result),
  );
  if (chosen)
    return (
      <p class="actions">
        <span>{t('chosenUser', { name: chosen.preferredLoginName })}</span>
        <button type="button" class="secondary" onClick={() => onChoose(undefined)}>
          {t('cancel')}
        </button>
      </p>
    );
  return (
    <div>
      <div class="filters">
        <Field label={t('findUser')} name="loginName" type="search" value={text} onInput={setText} help={t('findUserHelp')} />
        <button type="button" class="secondary" onClick={() => find.submit()} disabled={find.busy || !text.trim()}>
          {t('search')}
        </button>
      </div>
      {matches && matches.length === 0 && <p role="status">{t('noUserFound')}</p>}
      {matches && matches.length > 0 && (
        <ul class="plain items">
          {matches.map((user) => (
            <li key={user.id}>
              <span>
                {user.preferredLoginName} <span class="badge">{user.human?.profile.displayName ?? user.machine?.name}</span>
              </span>
              <button type="button" class="secondary" onClick={() => onChoose(user)}>
                {t('chooseUser', { name: user.preferredLoginName })}
              </button>
            </li>
          ))}
        </ul>
      )}
      <Status error={find.error} />
    </div>
  );
}

/**
 * The API's refusals of a member change in the console's language: the
 * last owner (docs/api/users.md, Members) and the every-role rule
 * (docs/security.md), known by their reasons (docs/api/README.md, Errors);
 * others as every page says them.
 */
function refusalText(error: unknown): string {
  if (error instanceof ApiError && error.is('LAST_OWNER')) return t('lastOwnerRefused');
  if (error instanceof ApiError && error.is('MEMBER_ROLES_NOT_HELD')) return t('needsEveryRole');
  return message(error);
}

function Refusal({ error }: { error?: unknown }) {
  return (
    <div role="status" class={error ? 'status error' : 'status'}>
      {error ? refusalText(error) : ''}
    </div>
  );
}

/** The roles of one member, replaced as a whole (PUT …/members/{userId}). */
function RoleEditor({
  member,
  path,
  roles,
  ownerRole,
  onDone,
  onCancel,
}: {
  member: MemberView;
  path: string;
  roles: string[];
  ownerRole: string;
  onDone: () => void;
  onCancel: () => void;
}) {
  const { api } = useConsole();
  const [chosen, setChosen] = useState<string[]>(member.roles);
  const [empty, setEmpty] = useState(false);
  const save = useSubmit(() => api.call('PUT', `${path}/${member.userId}`, { roles: chosen }), onDone);
  const run = () => {
    setEmpty(chosen.length === 0);
    if (chosen.length) void save.submit();
  };
  const ownOwnerRoleGoes = member.userId === signedInUserId() && member.roles.includes(ownerRole) && !chosen.includes(ownerRole);
  const title = t('changeRolesOf', { name: member.preferredLoginName });
  return (
    <form
      noValidate
      class="panel"
      aria-label={title}
      onSubmit={(event) => {
        event.preventDefault();
        run();
      }}
    >
      <RoleChecks legend={title} roles={roles} chosen={chosen} onChange={setChosen} />
      <div class="actions">
        <button type="button" class="secondary" onClick={onCancel}>
          {t('cancel')}
        </button>
        {ownOwnerRoleGoes ? (
          <ConfirmButton label={t('saveRoles')} question={t('confirmOwnOwnerRole')} kind="primary" onConfirm={run} disabled={save.busy} />
        ) : (
          <button type="submit" disabled={save.busy}>
            {t('saveRoles')}
          </button>
        )}
      </div>
      {empty ? (
        <div role="status" class="status error">
          {t('chooseOneRole')}
        </div>
      ) : (
        <Refusal error={save.error} />
      )}
    </form>
  );
}

/** The roles a member may hold, in words, as checkboxes. */
function RoleChecks({ legend, roles, chosen, onChange }: { legend: string; roles: string[]; chosen: string[]; onChange: (roles: string[]) => void }) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {roles.map((role) => (
        <Check
          key={role}
          label={labelOf(role)}
          checked={chosen.includes(role)}
          onChange={(on) => onChange(on ? [...chosen, role] : chosen.filter((r) => r !== role))}
        />
      ))}
    </fieldset>
  );
}

function Members({ title, path, roles, ownerRole, id }: { title: string; path: string; roles: string[]; ownerRole: string; id: string }) {
  const { api, orgId } = useConsole();
  const [offset, setOffset] = useState(0);
  const [user, setUser] = useState<UserView>();
  const [chosen, setChosen] = useState<string[]>([]);
  const [done, setDone] = useState('');
  const [editing, setEditing] = useState<MemberView>();
  const [rolesDone, setRolesDone] = useState('');
  const list = useLoad(() => searchPage<MemberView>(api, `${path}/_search`, offset, PAGE), [orgId, path, offset]);
  const add = useSubmit(
    () => api.call('POST', path, { userId: user?.id ?? '', roles: chosen }),
    () => {
      setDone(t('memberAdded'));
      setUser(undefined);
      setChosen([]);
      list.reload();
    },
  );
  const removal = useAction((userId: string) => api.call('DELETE', `${path}/${userId}`), list.reload);
  const columns: Array<Column<MemberView>> = [
    { header: t('displayName'), cell: (m) => m.displayName },
    { header: t('loginName'), cell: (m) => m.preferredLoginName },
    { header: t('roles'), cell: (m) => m.roles.map(labelOf).join(', ') },
    {
      header: t('changeRoles'),
      cell: (m) => (
        <button
          type="button"
          class="secondary"
          aria-label={`${t('changeRoles')}: ${m.preferredLoginName}`}
          onClick={() => {
            setRolesDone('');
            setEditing(m);
          }}
        >
          {t('changeRoles')}
        </button>
      ),
    },
    {
      header: t('removeMember'),
      cell: (m) => (
        <ConfirmButton
          label={t('removeMember')}
          question={t('confirmRemove', { name: m.preferredLoginName })}
          onConfirm={() => void removal.run(m.userId)}
          disabled={removal.busy}
        />
      ),
    },
  ];
  return (
    <section aria-labelledby={`${id}-heading`}>
      <h2 id={`${id}-heading`}>{title}</h2>
      <ResultTable caption={title} columns={columns} rowKey={(m) => m.userId} list={list} paging={{ limit: PAGE, onMove: setOffset }} empty={t('noMembers')} />
      <Refusal error={removal.error} />
      {editing && (
        <RoleEditor
          key={editing.userId}
          member={editing}
          path={path}
          roles={roles}
          ownerRole={ownerRole}
          onCancel={() => setEditing(undefined)}
          onDone={() => {
            setEditing(undefined);
            setRolesDone(t('rolesSaved'));
            list.reload();
          }}
        />
      )}
      <Status ok={rolesDone} />
      <form noValidate class="panel" onSubmit={add.submit} aria-label={`${title}: ${t('add')}`}>
        <UserFinder chosen={user} onChoose={setUser} />
        <RoleChecks legend={t('roles')} roles={roles} chosen={chosen} onChange={setChosen} />
        <div class="actions">
          <button type="submit" disabled={add.busy || !user}>
            {t('add')}
          </button>
        </div>
        <Status ok={done} error={add.error} />
      </form>
    </section>
  );
}

export function MembersPage() {
  const { iamOwner } = useConsole();
  return (
    <>
      <Heading>{t('members')}</Heading>
      <Members id="org-members" title={t('orgMembers')} path="/management/v1/orgs/me/members" roles={ORG_ROLES} ownerRole="ORG_OWNER" />
      {iamOwner && <Members id="instance-members" title={t('instanceMembers')} path="/admin/v1/members" roles={INSTANCE_ROLES} ownerRole="IAM_OWNER" />}
    </>
  );
}
