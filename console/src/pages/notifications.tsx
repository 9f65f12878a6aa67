import { useState } from 'preact/hooks';
import type { FieldViolation } from '../api.ts';
import { Field, Heading, Loading, SaveEnd, SecretOnce, Select, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { t } from '../i18n.ts';
import type { SetSmsRelay, SmsRelayView, SmtpSettingsView } from '../views.ts';

// The instance's senders (docs/api/notifications.md, docs/api/sms.md),
// IAM_OWNER: the SMTP server with its test mail, and the SMS relay whose
// signing key the first save shows once. The SMTP password is write-only:
// the form says whether one is stored and sends one only when typed.

const TLS_MODES = ['TLS_MODE_STARTTLS', 'TLS_MODE_IMPLICIT', 'TLS_MODE_NONE'] as const;
const PORT = /^\d{1,5}$/;

interface SmtpDraft {
  senderAddress: string;
  senderName: string;
  host: string;
  port: string;
  user: string;
  password: string;
  tls: string;
}

function draftOf(view: SmtpSettingsView): SmtpDraft {
  return {
    senderAddress: view.senderAddress ?? '',
    senderName: view.senderName ?? '',
    host: view.host ?? '',
    port: view.port === undefined ? '587' : String(view.port),
    user: view.user ?? '',
    password: '',
    tls: view.tls ?? 'TLS_MODE_STARTTLS',
  };
}

/** The body of the PUT, or the port's problem: an empty or non-numeric port is refused here, never sent as 0. */
function bodyOf(draft: SmtpDraft): { body?: object; violations: FieldViolation[] } {
  const port = draft.port.trim();
  if (!PORT.test(port)) return { violations: [{ field: 'port', description: port ? t('notANumber') : t('required') }] };
  const optional = (name: 'senderName' | 'user' | 'password', value: string) => (value ? { [name]: value } : {});
  return {
    body: {
      senderAddress: draft.senderAddress.trim(),
      host: draft.host.trim(),
      port: Number(port),
      tls: draft.tls,
      ...optional('senderName', draft.senderName.trim()),
      ...optional('user', draft.user.trim()),
      ...optional('password', draft.password),
    },
    violations: [],
  };
}

function SmtpForm({ view, onSaved }: { view: SmtpSettingsView; onSaved: () => void }) {
  const { api } = useConsole();
  const [draft, setDraft] = useState(draftOf(view));
  const [local, setLocal] = useState<FieldViolation[]>([]);
  const sent = useSubmit(() => api.call('PUT', '/admin/v1/smtp', bodyOf(draft).body), onSaved);
  const submit = (event: Event) => {
    event.preventDefault();
    const checked = bodyOf(draft);
    setLocal(checked.violations);
    if (checked.body) void sent.submit();
  };
  const set = (field: keyof SmtpDraft) => (value: string) => setDraft({ ...draft, [field]: value });
  const v = local.length ? local : sent.violations;
  return (
    <form noValidate onSubmit={submit} aria-label={t('smtpServer')}>
      <Field label={t('senderAddress')} name="senderAddress" type="email" value={draft.senderAddress} onInput={set('senderAddress')} required violations={v} />
      <Field label={t('senderName')} name="senderName" value={draft.senderName} onInput={set('senderName')} violations={v} />
      <Field label={t('host')} name="host" value={draft.host} onInput={set('host')} required violations={v} />
      <Field label={t('port')} name="port" type="number" value={draft.port} onInput={set('port')} required violations={v} />
      <Select label={t('tlsMode')} value={draft.tls} onChange={set('tls')} options={TLS_MODES.map((mode): [string, string] => [mode, t(mode)])} />
      <Field label={t('smtpUser')} name="user" value={draft.user} onInput={set('user')} violations={v} />
      <Field
        label={t('smtpPassword')}
        name="password"
        type="password"
        value={draft.password}
        onInput={set('password')}
        help={view.hasPassword ? t('passwordIsSet') : t('passwordNotSet')}
        violations={v}
        autocomplete="new-password"
      />
      <SaveEnd busy={sent.busy} error={sent.error} checkedHere={local.length > 0} />
    </form>
  );
}

function TestMail() {
  const { api } = useConsole();
  const [receiver, setReceiver] = useState('');
  const [done, setDone] = useState('');
  const sent = useSubmit(
    () => api.call('POST', '/admin/v1/smtp/_test', { receiverAddress: receiver.trim() }),
    () => setDone(t('testMailSent')),
  );
  const submit = (event: Event) => {
    setDone('');
    return sent.submit(event);
  };
  return (
    <form noValidate class="inline" onSubmit={submit} aria-label={t('testMail')}>
      <Field label={t('receiverAddress')} name="receiverAddress" type="email" value={receiver} onInput={setReceiver} required violations={sent.violations} />
      <button type="submit" class="secondary" disabled={sent.busy}>
        {t('testMail')}
      </button>
      <Status ok={done} error={sent.error} />
    </form>
  );
}

function SmtpSection() {
  const { api } = useConsole();
  const smtp = useLoad(() => api.call<SmtpSettingsView>('GET', '/admin/v1/smtp'), []);
  // The section reports a save: the form starts afresh from the saved settings, its password field empty again.
  const [done, setDone] = useState('');
  const changed = (what: string) => () => {
    setDone(what);
    smtp.reload();
  };
  const removal = useSubmit(() => api.call('DELETE', '/admin/v1/smtp'), changed(t('removed')));
  if (!smtp.data) return <Loading error={smtp.error} />;
  const isSet = smtp.data.host !== undefined;
  return (
    <section class="panel" aria-labelledby="smtp-heading">
      <h2 id="smtp-heading">{t('smtpServer')}</h2>
      <p>{isSet ? t('smtpSet') : t('smtpNone')}</p>
      <SmtpForm key={JSON.stringify(smtp.data)} view={smtp.data} onSaved={changed(t('saved'))} />
      {isSet && <ConfirmButton label={t('removeSmtp')} question={t('confirmRemoveSmtp')} onConfirm={() => removal.submit()} disabled={removal.busy} />}
      <Status ok={done} error={removal.error} />
      <TestMail />
    </section>
  );
}

function SmsSection() {
  const { api } = useConsole();
  const relay = useLoad(() => api.call<SmsRelayView>('GET', '/admin/v1/sms/http'), []);
  const [endpoint, setEndpoint] = useState<string>();
  const [signingKey, setSigningKey] = useState('');
  const [done, setDone] = useState('');
  const shown = endpoint ?? relay.data?.endpoint ?? '';
  const save = useSubmit(
    () => api.call<SetSmsRelay>('PUT', '/admin/v1/sms/http', { endpoint: shown.trim() }),
    (answer) => {
      setDone(t('saved'));
      if (answer.signingKey) setSigningKey(answer.signingKey);
      relay.reload();
    },
  );
  const removal = useSubmit(
    () => api.call('DELETE', '/admin/v1/sms/http'),
    () => {
      setDone(t('removed'));
      setEndpoint(undefined);
      setSigningKey('');
      relay.reload();
    },
  );
  const submit = (event: Event) => {
    setDone('');
    return save.submit(event);
  };
  if (!relay.data) return <Loading error={relay.error} />;
  return (
    <section class="panel" aria-labelledby="sms-heading">
      <h2 id="sms-heading">{t('smsRelay')}</h2>
      {!relay.data.endpoint && <p>{t('smsNone')}</p>}
      <form noValidate class="inline" onSubmit={submit} aria-label={t('smsRelay')}>
        <Field label={t('endpoint')} name="endpoint" value={shown} onInput={setEndpoint} required violations={save.violations} />
        <button type="submit" disabled={save.busy}>
          {t('save')}
        </button>
      </form>
      {signingKey && <SecretOnce label={t('relaySigningKey')} value={signingKey} fileName="sms-relay-signing-key.txt" />}
      {relay.data.endpoint && (
        <ConfirmButton label={t('removeSms')} question={t('confirmRemoveSms')} onConfirm={() => removal.submit()} disabled={removal.busy} />
      )}
      <Status ok={done} error={save.error ?? removal.error} />
    </section>
  );
}

export function NotificationsPage() {
  return (
    <>
      <Heading>{t('notifications')}</Heading>
      <SmtpSection />
      <SmsSection />
    </>
  );
}
