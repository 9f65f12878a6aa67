import { useState } from 'preact/hooks';
import { Check, Field, Heading, Status, useConsole, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { CopyText } from '../copy-text.tsx';
import { t } from '../i18n.ts';
import { href, navigate } from '../router.ts';
import type { CreatedSamlApp, SamlAppView } from '../views.ts';
import { base64Of } from '../base64.ts';

// SAML apps of a project (docs/api/saml-apps.md): a service provider known
// by its metadata, pasted or fetched once from a URL; its page shows what
// the metadata said and the address of our own metadata to give the SP,
// and whether the SP may be sent IdP-initiated sign-ins (docs/saml.md).

export function SamlAppForm({ projectId, onCreated }: { projectId: string; onCreated: (appId: string) => void }) {
  const { api } = useConsole();
  const [name, setName] = useState('');
  const [source, setSource] = useState<'xml' | 'url'>('xml');
  const [xml, setXml] = useState('');
  const [url, setUrl] = useState('');
  const { submit, busy, error, violations } = useSubmit(
    () =>
      api.call<CreatedSamlApp>('POST', `/management/v1/projects/${projectId}/apps/saml`, {
        name: name.trim(),
        ...(source === 'xml' ? { metadataXml: base64Of(xml.trim()) } : { metadataUrl: url.trim() }),
      }),
    (created) => onCreated(created.appId),
  );
  return (
    <form noValidate class="panel" onSubmit={submit} aria-label={t('newSamlApp')}>
      <Field label={t('name')} name="name" value={name} onInput={setName} required violations={violations} />
      <fieldset>
        <legend>{t('metadataSource')}</legend>
        {(['xml', 'url'] as const).map((choice) => (
          <label class="radio" key={choice}>
            <input type="radio" name="metadataSource" checked={source === choice} onChange={() => setSource(choice)} />{' '}
            {t(choice === 'xml' ? 'metadataAsXml' : 'metadataAsUrl')}
          </label>
        ))}
      </fieldset>
      {source === 'xml' ? (
        <Field label={t('metadataXml')} name="metadataXml" multiline value={xml} onInput={setXml} required violations={violations} />
      ) : (
        <Field label={t('metadataUrl')} name="metadataUrl" value={url} onInput={setUrl} required violations={violations} />
      )}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('create')}
        </button>
      </div>
      <Status error={error} />
    </form>
  );
}

export function SamlAppPage({ app }: { app: SamlAppView }) {
  const { api, issuer } = useConsole();
  const back = `/apps?project=${app.projectId}`;
  const removal = useSubmit(
    () => api.call('DELETE', `/management/v1/projects/${app.projectId}/apps/${app.appId}`),
    () => navigate(back),
  );
  const config = app.samlConfig;
  const [idpInitiated, setIdpInitiated] = useState(config.allowIdpInitiated);
  const [saved, setSaved] = useState(config.allowIdpInitiated);
  const change = useSubmit(
    () => api.call('PUT', `/management/v1/projects/${app.projectId}/apps/${app.appId}`, { allowIdpInitiated: idpInitiated }),
    () => setSaved(idpInitiated),
  );
  return (
    <>
      <Heading>{app.name}</Heading>
      <p>
        <a href={href(back)}>{t('back')}</a>
      </p>
      <dl class="facts">
        <dt>{t('appType')}</dt>
        <dd>{t('samlApp')}</dd>
        <dt>{t('entityId')}</dt>
        <dd>
          <code>{config.entityId}</code>
        </dd>
        {config.metadataUrl && (
          <>
            <dt>{t('metadataUrl')}</dt>
            <dd>
              <code>{config.metadataUrl}</code>
            </dd>
          </>
        )}
        <dt>{t('assertionConsumers')}</dt>
        <dd>
          {config.assertionConsumerServices.map((acs) => (
            <div key={acs.location}>
              <code>{acs.location}</code>
            </div>
          ))}
        </dd>
        <dt>{t('signedRequests')}</dt>
        <dd>{t(config.authnRequestsSigned ? 'yes' : 'no')}</dd>
      </dl>
      <CopyText label={t('idpMetadataUrl')} value={`${issuer}/saml/v2/metadata`} help={t('idpMetadataHelp')} />
      <form noValidate class="panel" onSubmit={change.submit} aria-label={t('idpInitiated')}>
        <Check label={t('allowIdpInitiated')} checked={idpInitiated} onChange={setIdpInitiated} />
        <div class="actions">
          <button type="submit" disabled={change.busy}>
            {t('save')}
          </button>
        </div>
        <Status error={change.error} />
      </form>
      {saved && (
        <CopyText label={t('idpInitiatedUrl')} value={`${issuer}/saml/v2/init?${new URLSearchParams({ sp: config.entityId })}`} help={t('idpInitiatedHelp')} />
      )}
      <section aria-labelledby="remove-app-heading" class="danger">
        <h2 id="remove-app-heading">{t('removeApp')}</h2>
        <ConfirmButton label={t('removeApp')} question={t('confirmRemove', { name: app.name })} onConfirm={() => removal.submit()} disabled={removal.busy} />
        <Status error={removal.error} />
      </section>
    </>
  );
}
