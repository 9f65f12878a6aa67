import { useState } from 'preact/hooks';
import { searchAll, searchPage } from '../api.ts';
import { Check, Field, Heading, Loading, SecretOnce, Select, Status, lines, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ruleText, t } from '../i18n.ts';
import { ConfirmButton } from '../confirm.tsx';
import { SamlAppForm, SamlAppPage } from './saml-apps.tsx';
import { ResultTable, type Column } from '../result-table.tsx';
import { href, navigate } from '../router.ts';
import type { AppView, ChangedApp, CreatedApp, IssuedAppKey, ProjectListItem, RegeneratedSecret, SamlAppView } from '../views.ts';
import {
  ACCESS_TOKEN_TYPES as ACCESS_TOKEN_TYPE_VALUES,
  APP_DEFAULTS,
  APP_TYPES,
  AUTH_METHODS as AUTH_METHOD_VALUES,
  type AppSettings as DomainAppSettings,
  GRANT_TYPES as GRANT_TYPE_VALUES,
  RESPONSE_TYPES as RESPONSE_TYPE_VALUES,
} from '../../../src/domain/apps.ts';

// OIDC apps of a project: list, every field to create or change one, the
// client secret and key files shown once (docs/api/projects-apps.md).

const PAGE = 20;
// The app fields' values and defaults are the service's own (src/domain/apps.ts), bundled in.
const RESPONSE_TYPES = Object.keys(RESPONSE_TYPE_VALUES);
const GRANT_TYPES = Object.keys(GRANT_TYPE_VALUES);
const AUTH_METHODS = Object.keys(AUTH_METHOD_VALUES);
const TOKEN_TYPES = Object.keys(ACCESS_TOKEN_TYPE_VALUES);
/** The methods that authenticate with a client secret: only these have one to replace. */
const SECRET_METHODS = ['OIDC_AUTH_METHOD_TYPE_BASIC', 'OIDC_AUTH_METHOD_TYPE_POST'];
const FLAGS = ['idTokenUserinfoAssertion', 'accessTokenRoleAssertion', 'idTokenRoleAssertion', 'devMode', 'iamApiAccess'] as const;

/** The form edits the fields as plain strings: the enums' values come from the choices it offers. */
type Widened<T> = { [K in keyof T]: T[K] extends readonly string[] ? string[] : T[K] extends string ? string : T[K] };
export type AppSettings = Widened<DomainAppSettings>;

const DEFAULTS: AppSettings = { ...APP_DEFAULTS, name: '' };

/** `OIDC_GRANT_TYPE_REFRESH_TOKEN` → `REFRESH TOKEN`: the enum's own words, readable. */
const words = (value: string, prefix: string) => value.slice(prefix.length).replace(/_/g, ' ');

const projectParam = () => new URLSearchParams(location.search).get('project') ?? '';

/** A project's list holds its SAML apps too (docs/api/saml-apps.md), shown by saml-apps.tsx. */
type ListedApp = AppView | SamlAppView;
const isSaml = (app: ListedApp): app is SamlAppView => 'samlConfig' in app;

const COLUMNS: Array<Column<ListedApp>> = [
  { header: t('name'), cell: (a) => <a href={href(`/projects/${a.projectId}/apps/${a.appId}`)}>{a.name}</a> },
  { header: t('clientId'), cell: (a) => <code>{isSaml(a) ? a.samlConfig.entityId : a.clientId}</code> },
  { header: t('appType'), cell: (a) => (isSaml(a) ? 'SAML' : words(a.appType, 'OIDC_APP_TYPE_')) },
];

export function AppsPage() {
  const { api, orgId } = useConsole();
  const projects = useLoad(() => searchAll<ProjectListItem>(api, '/management/v1/projects/_search'), [orgId]);
  const [chosen, setChosen] = useState(projectParam());
  const projectId = chosen || projects.data?.result[0]?.id || '';
  return (
    <>
      <Heading>{t('apps')}</Heading>
      {!projects.data ? (
        <Loading error={projects.error} />
      ) : projects.data.result.length === 0 ? (
        <p>{t('noProjects')}</p>
      ) : (
        <>
          <Select
            label={t('project')}
            value={projectId}
            onChange={(id) => {
              setChosen(id);
              navigate(`/apps?project=${id}`, true);
            }}
            options={projects.data.result.map((p): [string, string] => [p.id, p.name])}
          />
          <ProjectApps projectId={projectId} key={projectId} />
        </>
      )}
    </>
  );
}

function ProjectApps({ projectId }: { projectId: string }) {
  const { api, orgId } = useConsole();
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  const [creatingSaml, setCreatingSaml] = useState(false);
  const [secret, setSecret] = useState<{ clientId: string; clientSecret?: string }>();
  const list = useLoad(() => searchPage<ListedApp>(api, `/management/v1/projects/${projectId}/apps/_search`, offset, PAGE), [orgId, projectId, offset]);
  return (
    <>
      <div class="toolbar">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {t('newApp')}
        </button>
        <button type="button" class="secondary" aria-expanded={creatingSaml} onClick={() => setCreatingSaml(!creatingSaml)}>
          {t('newSamlApp')}
        </button>
      </div>
      {creatingSaml && <SamlAppForm projectId={projectId} onCreated={(appId) => navigate(`/projects/${projectId}/apps/${appId}`)} />}
      {creating && (
        <AppForm
          initial={DEFAULTS}
          submitLabel={t('create')}
          send={(settings) => api.call<CreatedApp>('POST', `/management/v1/projects/${projectId}/apps/oidc`, settings)}
          onDone={(created) => {
            setCreating(false);
            setSecret(created);
            list.reload();
          }}
        />
      )}
      {secret && <Issued clientId={secret.clientId} clientSecret={secret.clientSecret} />}
      <ResultTable caption={t('apps')} columns={COLUMNS} rowKey={(a) => a.appId} list={list} paging={{ limit: PAGE, onMove: setOffset }} empty={t('noApps')} />
    </>
  );
}

function Issued({ clientId, clientSecret }: { clientId: string; clientSecret?: string }) {
  return (
    <section class="panel" aria-label={t('clientId')}>
      <p>
        {t('clientId')}: <code data-client-id={clientId}>{clientId}</code>
      </p>
      {clientSecret && <SecretOnce label={t('clientSecret')} value={clientSecret} fileName={`${clientId}.secret.txt`} />}
    </section>
  );
}

function Choices({
  legend,
  values,
  prefix,
  chosen,
  onChange,
}: {
  legend: string;
  values: string[];
  prefix: string;
  chosen: string[];
  onChange: (values: string[]) => void;
}) {
  return (
    <fieldset>
      <legend>{legend}</legend>
      {values.map((value) => (
        <Check
          key={value}
          label={words(value, prefix)}
          checked={chosen.includes(value)}
          onChange={(on) => onChange(on ? [...chosen, value] : chosen.filter((v) => v !== value))}
        />
      ))}
    </fieldset>
  );
}

function AppForm<T>({
  initial,
  submitLabel,
  send,
  onDone,
}: {
  initial: AppSettings;
  submitLabel: string;
  send: (settings: AppSettings) => Promise<T>;
  onDone: (result: T) => void;
}) {
  const { iamOwner } = useConsole();
  const [app, setApp] = useState(initial);
  const [uris, setUris] = useState({ redirect: initial.redirectUris.join('\n'), logout: initial.postLogoutRedirectUris.join('\n') });
  const { submit, busy, error, violations } = useSubmit(
    () => send({ ...app, redirectUris: lines(uris.redirect), postLogoutRedirectUris: lines(uris.logout) }),
    onDone,
  );
  const set =
    <K extends keyof AppSettings>(key: K) =>
    (value: AppSettings[K]) =>
      setApp({ ...app, [key]: value });
  return (
    <form noValidate class="panel" onSubmit={submit} aria-label={submitLabel}>
      <Field label={t('name')} name="name" value={app.name} onInput={set('name')} required violations={violations} />
      <Field
        label={t('redirectUris')}
        name="redirectUris"
        multiline
        value={uris.redirect}
        onInput={(redirect) => setUris({ ...uris, redirect })}
        violations={violations}
        fields={['redirectUris', ...app.redirectUris.map((_, i) => `redirectUris[${i}]`)]}
      />
      <Field
        label={t('postLogoutRedirectUris')}
        name="postLogoutRedirectUris"
        multiline
        value={uris.logout}
        onInput={(logout) => setUris({ ...uris, logout })}
        violations={violations}
      />
      <Choices legend={t('responseTypes')} values={RESPONSE_TYPES} prefix="OIDC_RESPONSE_TYPE_" chosen={app.responseTypes} onChange={set('responseTypes')} />
      <Choices legend={t('grantTypes')} values={GRANT_TYPES} prefix="OIDC_GRANT_TYPE_" chosen={app.grantTypes} onChange={set('grantTypes')} />
      <Select
        label={t('appType')}
        value={app.appType}
        onChange={set('appType')}
        options={APP_TYPES.map((v): [string, string] => [v, words(v, 'OIDC_APP_TYPE_')])}
      />
      <Select
        label={t('authMethodType')}
        value={app.authMethodType}
        onChange={set('authMethodType')}
        options={AUTH_METHODS.map((v): [string, string] => [v, words(v, 'OIDC_AUTH_METHOD_TYPE_')])}
      />
      <Select
        label={t('accessTokenType')}
        value={app.accessTokenType}
        onChange={set('accessTokenType')}
        options={TOKEN_TYPES.map((v): [string, string] => [v, words(v, 'OIDC_TOKEN_TYPE_')])}
      />
      {FLAGS.map((flag) => (
        <Check key={flag} label={t(flag)} checked={app[flag]} onChange={set(flag)} disabled={flag === 'iamApiAccess' && !iamOwner} />
      ))}
      {violations.length > 0 && (
        <ul class="field-error">
          {violations.map((v) => (
            <li key={v.field}>
              {v.field}: {ruleText(v.description)}
            </li>
          ))}
        </ul>
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
      <Status error={error} />
    </form>
  );
}

export function AppPage({ projectId, appId }: { projectId: string; appId: string }) {
  const { api, orgId } = useConsole();
  const path = `/management/v1/projects/${projectId}/apps/${appId}`;
  const app = useLoad(() => api.call<{ app: ListedApp }>('GET', path).then((r) => r.app), [orgId, path]);
  const [done, setDone] = useState('');
  const [secret, setSecret] = useState<{ clientSecret?: string; keyFile?: { name: string; body: string } }>({});
  const newKey = useSubmit(
    () => api.call<IssuedAppKey>('POST', `${path}/keys`, { type: 'KEY_TYPE_JSON' }),
    (r) => setSecret({ keyFile: { name: `${r.id}.json`, body: atob(r.keyDetails) } }),
  );
  const removal = useSubmit(
    () => api.call('DELETE', path),
    () => navigate(`/apps?project=${projectId}`),
  );
  const regenerate = useSubmit(
    () => api.call<RegeneratedSecret>('POST', `${path}/_regenerate_secret`, {}),
    (r) => setSecret({ clientSecret: r.clientSecret }),
  );
  if (!app.data) return <Loading error={app.error} />;
  if (isSaml(app.data)) return <SamlAppPage app={app.data} />;
  const a = app.data;
  const { appId: _id, projectId: _project, clientId, ...settings } = a;
  return (
    <>
      <Heading>{a.name}</Heading>
      <p>
        <a href={href(`/apps?project=${projectId}`)}>{t('back')}</a>
      </p>
      <p>
        {t('clientId')}: <code>{clientId}</code>
      </p>
      <Status ok={done} />
      {secret.clientSecret && <SecretOnce label={t('clientSecret')} value={secret.clientSecret} fileName={`${clientId}.secret.txt`} />}
      {secret.keyFile && <SecretOnce label={t('keyFile')} value={secret.keyFile.body} fileName={secret.keyFile.name} />}
      <AppForm
        key={a.details.sequence}
        initial={{ ...DEFAULTS, ...pick(settings) }}
        submitLabel={t('save')}
        send={(changed) => api.call<ChangedApp>('PUT', path, changed)}
        onDone={(r) => {
          setDone(t('saved'));
          setSecret({ clientSecret: r.clientSecret });
          app.reload();
        }}
      />
      {SECRET_METHODS.includes(a.authMethodType) && (
        <section aria-labelledby="app-secret-heading">
          <h2 id="app-secret-heading">{t('clientSecret')}</h2>
          <ConfirmButton
            label={t('regenerateSecret')}
            question={t('confirmRegenerate')}
            onConfirm={() => regenerate.submit()}
            disabled={regenerate.busy}
            kind="secondary"
          />
          <Status error={regenerate.error} />
        </section>
      )}
      {a.authMethodType === 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' && (
        <section aria-labelledby="app-keys-heading">
          <h2 id="app-keys-heading">{t('keys')}</h2>
          <button type="button" onClick={() => newKey.submit()} disabled={newKey.busy}>
            {t('newKey')}
          </button>
          <Status error={newKey.error} />
        </section>
      )}
      <section aria-labelledby="remove-app-heading" class="danger">
        <h2 id="remove-app-heading">{t('removeApp')}</h2>
        <ConfirmButton label={t('removeApp')} question={t('confirmRemove', { name: a.name })} onConfirm={() => removal.submit()} disabled={removal.busy} />
        <Status error={removal.error} />
      </section>
    </>
  );
}

/** Only the fields the API takes back (a view has more: details, and fields of later versions). */
function pick(view: Partial<AppSettings>): Partial<AppSettings> {
  const known = Object.keys(DEFAULTS) as Array<keyof AppSettings>;
  return Object.fromEntries(known.filter((k) => view[k] !== undefined).map((k) => [k, view[k]])) as Partial<AppSettings>;
}
