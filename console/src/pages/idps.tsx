import { useState } from 'preact/hooks';
import { searchAll } from '../api.ts';
import { Heading, Loading, Select, Status, useAction, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { CopyText } from '../copy-text.tsx';
import { labelOf, t } from '../i18n.ts';
import { ResultTable, type Column } from '../result-table.tsx';
import { href, navigate } from '../router.ts';
import type { CreatedIdp, IdpView, OrgPolicyView, PolicyIdpView } from '../views.ts';
import { draftOf, emptyDraft, IdpForm, kindOfType, scopePrefix, type IdpScope } from './idp-form.tsx';

// External identity providers (docs/idps.md): the redirect URI to register
// upstream, the org's providers (ORG_OWNER) and the instance's (IAM_OWNER),
// one provider's page to change or remove it, and the list of providers the
// org's login page shows, with what the login policy says about them.

/** The page of a provider: an org's under /idps/{id}, the instance's under /idps/instance/{id}. */
const idpPath = (scope: IdpScope, id: string) => (scope === 'org' ? `/idps/${id}` : `/idps/instance/${id}`);

function idpColumns(scope: IdpScope, iamOwner: boolean): Array<Column<IdpView>> {
  const linkable = (idp: IdpView) => scope === 'instance' || idp.owner === 'IDP_OWNER_TYPE_ORG' || iamOwner;
  const pathOf = (idp: IdpView) => (idp.owner === 'IDP_OWNER_TYPE_ORG' ? idpPath('org', idp.id) : idpPath('instance', idp.id));
  return [
    { header: t('name'), cell: (idp) => (linkable(idp) ? <a href={href(pathOf(idp))}>{idp.name}</a> : idp.name) },
    { header: t('type'), cell: (idp) => labelOf(idp.type) },
    ...(scope === 'org' ? [{ header: t('idpOwner'), cell: (idp: IdpView) => t(idp.owner === 'IDP_OWNER_TYPE_ORG' ? 'ownerOrg' : 'ownerInstance') }] : []),
    { header: t('state'), cell: (idp) => labelOf(idp.state) },
  ];
}

/** `round` moves when a provider is added anywhere on the page: an org's list holds the instance's too. */
function IdpSection({ scope, round, onChanged }: { scope: IdpScope; round: number; onChanged: () => void }) {
  const { api, orgId, iamOwner } = useConsole();
  const [creating, setCreating] = useState(false);
  const list = useLoad(() => searchAll<IdpView>(api, `${scopePrefix(scope)}/idps/_search`), [orgId, scope, round]);
  const title = t(scope === 'org' ? 'orgIdps' : 'instanceIdps');
  const id = `idps-${scope}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <div class="toolbar">
        <button type="button" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          {`${t('newIdp')}: ${title}`}
        </button>
      </div>
      {creating && (
        <IdpForm
          initial={emptyDraft()}
          label={`${t('newIdp')}: ${title}`}
          submitLabel={t('create')}
          send={(kind, body) => api.call<CreatedIdp>('POST', `${scopePrefix(scope)}/idps/${kind.name}`, body)}
          onDone={() => {
            setCreating(false);
            onChanged();
          }}
        />
      )}
      <ResultTable caption={title} columns={idpColumns(scope, iamOwner)} rowKey={(idp) => idp.id} list={list} empty={t('noIdps')} />
    </section>
  );
}

type LoginPolicy = OrgPolicyView<{ allowExternalIdp: boolean; forceMfa: boolean; forceMfaLocalOnly: boolean }>;

/** The providers on the org's login page: add one of those the org may use, remove one after a confirmation. */
function LoginPageIdps({ round }: { round: number }) {
  const { api, orgId } = useConsole();
  const policy = useLoad(() => api.call<LoginPolicy>('GET', '/management/v1/policies/login'), [orgId]);
  const listed = useLoad(() => searchAll<PolicyIdpView>(api, '/management/v1/policies/login/idps/_search'), [orgId]);
  const usable = useLoad(() => searchAll<IdpView>(api, '/management/v1/idps/_search'), [orgId, round]);
  const [chosen, setChosen] = useState('');
  const [done, setDone] = useState('');
  const changed = (message: string) => {
    setDone(message);
    policy.reload();
    listed.reload();
  };
  const onPage = new Set(listed.data?.result.map((idp) => idp.idpId));
  const addable = (usable.data?.result ?? []).filter((idp) => !onPage.has(idp.id));
  const choice = addable.some((idp) => idp.id === chosen) ? chosen : (addable[0]?.id ?? '');
  const add = useSubmit(
    () => api.call('POST', '/management/v1/policies/login/idps', { idpId: choice }),
    () => changed(t('idpAdded')),
  );
  const remove = useAction(
    (idpId: string) => api.call('DELETE', `/management/v1/policies/login/idps/${idpId}`),
    () => changed(t('removed')),
  );
  const columns: Array<Column<PolicyIdpView>> = [
    { header: t('name'), cell: (idp) => idp.idpName },
    { header: t('type'), cell: (idp) => labelOf(idp.idpType) },
    { header: t('idpOwner'), cell: (idp) => t(idp.ownerType === 'IDP_OWNER_TYPE_ORG' ? 'ownerOrg' : 'ownerInstance') },
    {
      header: t('remove'),
      cell: (idp) => (
        <ConfirmButton
          label={t('removeFromLoginPage')}
          question={t('confirmRemoveFromLoginPage', { name: idp.idpName })}
          onConfirm={() => remove.run(idp.idpId)}
          disabled={remove.busy}
        />
      ),
    },
  ];
  return (
    <section aria-labelledby="login-page-idps" class="panel">
      <h2 id="login-page-idps">{t('loginPageIdps')}</h2>
      {!policy.data ? (
        <Loading error={policy.error} />
      ) : (
        <>
          <p>{t(policy.data.policy.allowExternalIdp ? 'externalIdpsShown' : 'externalIdpsHidden')}</p>
          <p>{t(policy.data.policy.forceMfaLocalOnly ? 'mfaLocalOnly' : 'mfaEverywhere')}</p>
          {policy.data.isDefault && <p class="help">{t('copiesDefault')}</p>}
        </>
      )}
      <ResultTable caption={t('loginPageIdps')} columns={columns} rowKey={(idp) => idp.idpId} list={listed} empty={t('noLoginIdps')} />
      {usable.data &&
        (addable.length ? (
          <form noValidate class="inline" onSubmit={add.submit} aria-label={t('addToLoginPage')}>
            <Select label={t('chooseIdp')} value={choice} onChange={setChosen} options={addable.map((idp): [string, string] => [idp.id, idp.name])} />
            <button type="submit" disabled={add.busy}>
              {t('addToLoginPage')}
            </button>
          </form>
        ) : (
          <p>{t('noIdpToAdd')}</p>
        ))}
      <Status ok={done} error={add.error ?? remove.error} />
    </section>
  );
}

export function IdpsPage() {
  const { iamOwner, issuer } = useConsole();
  const [round, setRound] = useState(0);
  const changed = () => setRound((r) => r + 1);
  return (
    <>
      <Heading>{t('idps')}</Heading>
      <CopyText label={t('callbackUri')} value={`${issuer}/idps/callback`} help={t('callbackUriHelp')} />
      <IdpSection scope="org" round={round} onChanged={changed} />
      {iamOwner && <IdpSection scope="instance" round={round} onChanged={changed} />}
      <LoginPageIdps round={round} />
    </>
  );
}

/** One provider: its settings to change (not an instance provider seen from an org), and its removal. */
export function IdpPage({ scope, idpId }: { scope: IdpScope; idpId: string }) {
  const { api, orgId } = useConsole();
  const path = `${scopePrefix(scope)}/idps/${idpId}`;
  const idp = useLoad(() => api.call<{ idp: IdpView }>('GET', path).then((r) => r.idp), [orgId, path]);
  const [done, setDone] = useState('');
  const removal = useSubmit(
    () => api.call('DELETE', path),
    () => navigate('/idps'),
  );
  if (!idp.data) return <Loading error={idp.error} />;
  const current = idp.data;
  const kind = kindOfType(current.type);
  const readOnly = scope === 'org' && current.owner === 'IDP_OWNER_TYPE_SYSTEM';
  return (
    <>
      <Heading>{current.name}</Heading>
      <p>
        <a href={href('/idps')}>{t('back')}</a>
      </p>
      <p>
        {t('type')}: {labelOf(current.type)}
      </p>
      <Status ok={done} />
      {readOnly || !kind ? (
        <p>{t('instanceIdpReadOnly')}</p>
      ) : (
        <>
          <IdpForm
            key={current.details.sequence}
            initial={draftOf(current)}
            fixedKind={kind}
            label={t('save')}
            submitLabel={t('save')}
            send={(k, body) => api.call('PUT', `${scopePrefix(scope)}/idps/${k.name}/${idpId}`, body)}
            onDone={() => {
              setDone(t('saved'));
              idp.reload();
            }}
          />
          <section aria-labelledby="remove-idp-heading" class="danger">
            <h2 id="remove-idp-heading">{t('removeIdp')}</h2>
            <ConfirmButton
              label={t('removeIdp')}
              question={t('confirmRemoveIdp', { name: current.name })}
              onConfirm={() => removal.submit()}
              disabled={removal.busy}
            />
            <Status error={removal.error} />
          </section>
        </>
      )}
    </>
  );
}
