import { useState } from 'preact/hooks';
import { Check, Field, Status, useAction, useConsole, useSubmit } from '../../components.tsx';
import { t, type MessageKey } from '../../i18n.ts';
import type { UserView } from '../../views.ts';

// What an admin sends a human (docs/api/users.md, "Invitations, email
// verification and password reset"): a new verification mail, a password
// reset mail, a new invitation, and a changed email address. Codes go only
// to an active user; a verification only for an unverified address and an
// invitation only to a user without a password (`human.passwordSet`), as
// the API refuses the others.

type Human = NonNullable<UserView['human']>;

/** `fits`: whether the API would send it to this human. */
const SENDS: Array<{ path: string; body: object; label: MessageKey; done: MessageKey; fits: (human: Human) => boolean }> = [
  { path: 'email/_resend_verification', body: {}, label: 'resendVerification', done: 'verificationSent', fits: (h) => !h.email.isEmailVerified },
  { path: 'password/_reset', body: { sendMail: true }, label: 'sendPasswordReset', done: 'resetSent', fits: () => true },
  { path: '_resend_initialization', body: {}, label: 'resendInvitation', done: 'invitationSent', fits: (h) => !h.passwordSet },
];

export function EmailActions({ user, human, onChanged }: { user: UserView; human: Human; onChanged: () => void }) {
  const { api } = useConsole();
  const [done, setDone] = useState('');
  const send = useAction(
    (what: (typeof SENDS)[number]) => api.call('POST', `/management/v1/users/${user.id}/${what.path}`, what.body),
    (_, what) => setDone(t(what.done)),
  );
  const active = user.state === 'USER_STATE_ACTIVE';
  return (
    <section aria-labelledby="mails-heading">
      <h3 id="mails-heading">{t('email')}</h3>
      {active && (
        <>
          <div class="row-actions">
            {SENDS.filter((what) => what.fits(human)).map((what) => (
              <button
                type="button"
                class="secondary"
                key={what.label}
                disabled={send.busy}
                onClick={() => {
                  setDone('');
                  void send.run(what);
                }}
              >
                {t(what.label)}
              </button>
            ))}
          </div>
          {!human.passwordSet && (
            <p class="help">
              {t('resendInvitation')}: {t('invitationHelp')}
            </p>
          )}
          <Status ok={done} error={send.error} />
        </>
      )}
      <EmailForm userId={user.id} email={human.email.email} onSaved={onChanged} />
    </section>
  );
}

function EmailForm({ userId, email, onSaved }: { userId: string; email: string; onSaved: () => void }) {
  const { api } = useConsole();
  const [value, setValue] = useState(email);
  const [verified, setVerified] = useState(false);
  const [done, setDone] = useState('');
  const save = useSubmit(
    () => api.call('PUT', `/management/v1/users/${userId}/email`, { email: value.trim(), isEmailVerified: verified }),
    () => {
      setDone(t('saved'));
      onSaved();
    },
  );
  const submit = (event: Event) => {
    setDone('');
    return save.submit(event);
  };
  return (
    <form noValidate onSubmit={submit} aria-label={t('changeEmail')}>
      <Field label={t('newEmail')} name="email" type="email" value={value} onInput={setValue} required violations={save.violations} />
      <Check label={t('emailVerified')} checked={verified} onChange={setVerified} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {t('changeEmail')}
        </button>
      </div>
      <Status ok={done} error={save.error} />
    </form>
  );
}
