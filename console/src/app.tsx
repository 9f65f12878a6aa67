import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, createApi, searchAll } from './api.ts';
import { signOut, startSignIn, forgetSession, type Session } from './auth.ts';
import type { ConsoleConfig } from './config.ts';
import { ConsoleContext, Loading, Select } from './components.tsx';
import { t, type MessageKey } from './i18n.ts';
import { href, useRoute } from './router.ts';
import { UsersPage } from './pages/users/list.tsx';
import { UserPage } from './pages/users/user.tsx';
import { ProjectPage, ProjectsPage } from './pages/projects.tsx';
import { AppPage, AppsPage } from './pages/apps.tsx';
import { MembersPage } from './pages/members.tsx';
import { PoliciesPage } from './pages/policies.tsx';
import { SigningKeysPage } from './pages/signing-keys.tsx';
import { EventsPage } from './pages/events.tsx';
import type { OrgView } from './views.ts';

// The frame of every page: skip link, header (org switch, sign-out), the
// main navigation, and the page of the current path.

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
  { path: '/signing-keys', label: 'signingKeys', instance: true },
  { path: '/events', label: 'events', instance: true },
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
  if (section === 'signing-keys' && iamOwner) return <SigningKeysPage />;
  if (section === 'events' && iamOwner) return <EventsPage />;
  return <UsersPage />;
}

export function App({ config, session }: { config: ConsoleConfig; session: Session }) {
  const path = useRoute();
  const [orgId, setOrgId] = useState(sessionStorage.getItem(ORG_KEY) ?? '');
  const api = useMemo(
    () =>
      createApi(
        () => session.accessToken,
        () => sessionStorage.getItem(ORG_KEY) || undefined,
        () => {
          forgetSession();
          startSignIn(config, location.pathname + location.search);
        },
      ),
    [session],
  );
  // Instance owners may list orgs; anyone else gets 403 and works in their own org.
  const [orgs, setOrgs] = useState<{ list?: OrgView[]; error?: unknown; done: boolean }>({ done: false });
  useEffect(() => {
    searchAll<OrgView>(api, '/admin/v1/orgs/_search').then(
      (page) => setOrgs({ list: page.result, done: true }),
      (error) => setOrgs(error instanceof ApiError && error.status === 403 ? { done: true } : { error, done: false }),
    );
  }, [api]);
  const section = NAV.find((item) => path === item.path || path.startsWith(`${item.path}/`)) ?? NAV[0]!;
  useEffect(() => {
    document.title = `${t(section.label)} – ${t('appName')}`;
  }, [section]);
  if (!orgs.done) return <Loading error={orgs.error} />;
  const iamOwner = Boolean(orgs.list);
  const chooseOrg = (id: string) => {
    sessionStorage.setItem(ORG_KEY, id);
    setOrgId(id);
  };
  return (
    <ConsoleContext.Provider value={{ api, iamOwner, orgId }}>
      <a class="skip" href="#main">
        {t('skipToContent')}
      </a>
      <header>
        <span class="brand">{t('appName')}</span>
        {orgs.list && (
          <Select
            label={t('organization')}
            value={orgId || session.orgId}
            onChange={chooseOrg}
            options={orgs.list.map((o): [string, string] => [o.id, o.name])}
          />
        )}
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
