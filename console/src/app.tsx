import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, createApi, searchAll } from './api.ts';
import { signOut, startSignIn, forgetSession, type Session } from './auth.ts';
import type { ConsoleConfig } from './config.ts';
import { ConsoleContext, Loading, Select } from './components.tsx';
import { t, type MessageKey } from './i18n.ts';
import { correctAddress, currentRoute, href, navigate, useRoute } from './router.ts';
import { UsersPage } from './pages/users/list.tsx';
import { UserPage } from './pages/users/user.tsx';
import { ProjectsPage } from './pages/projects.tsx';
import { ProjectPage } from './pages/project.tsx';
import { AppPage, AppsPage } from './pages/apps.tsx';
import { MembersPage } from './pages/members.tsx';
import { PoliciesPage } from './pages/policies.tsx';
import { OrgPage } from './pages/org.tsx';
import { SigningKeysPage } from './pages/signing-keys.tsx';
import { ScimPage } from './pages/scim.tsx';
import { EventsPage } from './pages/events.tsx';
import { NotificationsPage } from './pages/notifications.tsx';
import { MessageTextsPage } from './pages/message-texts.tsx';
import type { OrgView } from './views.ts';
// integrations: identity providers, actions
import { IdpPage, IdpsPage } from './pages/idps.tsx';
import { ActionsPage, TargetPage } from './pages/actions.tsx';

// The frame of every page: skip link, header (org switch, sign-out), the
// main navigation, and the page of the current path. The org the pages act
// on is the one in the address (/orgs/{orgId}/…); an address without one
// (a bookmark of an older console) moves to the org this tab used last, else
// the user's own.

const ORG_KEY = 'portcullis.console.org';

interface NavItem {
  path: string;
  label: MessageKey;
  instance?: boolean;
}

const NAV: NavItem[] = [
  { path: '/users', label: 'users' },
  { path: '/projects', label: 'projects' },
  { path: '/apps', label: 'apps' },
  { path: '/members', label: 'members' },
  { path: '/policies', label: 'policies' },
  { path: '/org', label: 'orgSettings' },
  { path: '/message-texts', label: 'messageTexts' },
  { path: '/idps', label: 'idps' },
  { path: '/scim', label: 'scim' },
  { path: '/signing-keys', label: 'signingKeys', instance: true },
  { path: '/events', label: 'events', instance: true },
  { path: '/notifications', label: 'notifications', instance: true },
  { path: '/actions', label: 'actions', instance: true },
];

function pageFor(path: string, iamOwner: boolean) {
  const parts = path.split('/').filter(Boolean);
  const [section = 'users', id, sub, subId] = parts;
  if (section === 'users') return id ? <UserPage userId={id} /> : <UsersPage />;
  if (section === 'projects' && id && sub === 'apps' && subId) return <AppPage projectId={id} appId={subId} />;
  if (section === 'projects') return id ? <ProjectPage projectId={id} /> : <ProjectsPage />;
  if (section === 'apps') return <AppsPage />;
  if (section === 'members') return <MembersPage />;
  if (section === 'policies') return <PoliciesPage />;
  if (section === 'org') return <OrgPage />;
  if (section === 'signing-keys' && iamOwner) return <SigningKeysPage />;
  if (section === 'events' && iamOwner) return <EventsPage />;
  if (section === 'message-texts') return <MessageTextsPage />;
  if (section === 'scim') return <ScimPage />;
  if (section === 'notifications' && iamOwner) return <NotificationsPage />;
  if (section === 'idps' && id === 'instance' && sub && iamOwner) return <IdpPage scope="instance" idpId={sub} />;
  if (section === 'idps') return id ? <IdpPage scope="org" idpId={id} /> : <IdpsPage />;
  if (section === 'actions' && iamOwner) return id === 'targets' && sub ? <TargetPage targetId={sub} /> : <ActionsPage />;
  return <UsersPage />;
}

export function App({ config, session }: { config: ConsoleConfig; session: Session }) {
  const route = useRoute();
  const orgId = route.org ?? '';
  const api = useMemo(
    () =>
      createApi(
        () => session.accessToken,
        () => currentRoute().org,
        () => {
          forgetSession();
          startSignIn(config, location.pathname + location.search);
        },
      ),
    [session],
  );
  useEffect(() => {
    if (orgId) sessionStorage.setItem(ORG_KEY, orgId);
    if (!orgId || route.path === '/') correctAddress(route.path === '/' ? '/users' : route.path, orgId || sessionStorage.getItem(ORG_KEY) || session.orgId);
  }, [orgId, route.path]);
  // Instance owners may list orgs; anyone else gets 403 and works in their own org.
  const [orgs, setOrgs] = useState<{ list?: OrgView[]; error?: unknown; done: boolean }>({ done: false });
  const [orgsRound, setOrgsRound] = useState(0);
  useEffect(() => {
    searchAll<OrgView>(api, '/admin/v1/orgs/_search').then(
      (page) => setOrgs({ list: page.result, done: true }),
      (error) => setOrgs(error instanceof ApiError && error.status === 403 ? { done: true } : { error, done: false }),
    );
  }, [api, orgsRound]);
  const path = route.path;
  const section = NAV.find((item) => path === item.path || path.startsWith(`${item.path}/`)) ?? NAV[0]!;
  useEffect(() => {
    document.title = `${t(section.label)} – ${t('appName')}`;
  }, [section]);
  if (!orgs.done || !orgId) return <Loading error={orgs.error} />;
  const iamOwner = Boolean(orgs.list);
  // A new org's pages start at the section's list: the ids of one org mean nothing in another.
  const chooseOrg = (id: string) => navigate(section.path, false, id);
  return (
    <ConsoleContext.Provider
      value={{ api, iamOwner, orgId, org: orgs.list?.find((o) => o.id === orgId), reloadOrgs: () => setOrgsRound((r) => r + 1), issuer: config.issuer }}
    >
      <a class="skip" href="#main">
        {t('skipToContent')}
      </a>
      <header>
        <span class="brand">{t('appName')}</span>
        {orgs.list && <Select label={t('organization')} value={orgId} onChange={chooseOrg} options={orgOptions(orgs.list, orgId)} />}
        <span class="who">{t('signedInAs', { name: session.name })}</span>
        <button type="button" class="secondary" onClick={() => signOut(config, session)}>
          {t('signOut')}
        </button>
      </header>
      <nav aria-label={t('navLabel')}>
        <ul>
          {NAV.filter((item) => iamOwner || !item.instance).map((item) => (
            <li key={item.path}>
              <a href={href(item.path)} aria-current={item === section ? 'page' : undefined}>
                {t(item.label)}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1} key={`${orgId}${path}`}>
        {pageFor(path, iamOwner)}
      </main>
    </ConsoleContext.Provider>
  );
}

/** The orgs to switch between; an org of the address the list does not know (gone, or a typo) is shown by its id. */
function orgOptions(list: OrgView[], orgId: string): Array<[string, string]> {
  const options = list.map((o): [string, string] => [o.id, o.name]);
  return list.some((o) => o.id === orgId) ? options : [[orgId, orgId], ...options];
}
