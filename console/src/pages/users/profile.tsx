import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { GENDERS } from '../../../../src/domain/users.ts';
import { Field, Select, Status, useConsole, useSubmit } from '../../components.tsx';
import { t } from '../../i18n.ts';
import type { UserView } from '../../views.ts';

// A human's profile, login name, and email and phone with their
// verification state; each form sends its own call (docs/api/users.md).

type Human = NonNullable<UserView['human']>;

/** A form of its own: its fields, a save button, what the answer said. */
function useSaved<T>(action: () => Promise<T>, onSaved: () => void) {
  const [done, setDone] = useState('');
  const sent = useSubmit(action, () => {
    setDone(t('saved'));
    onSaved();
  });
  const submit = (event?: Event) => {
    setDone('');
    return sent.submit(event);
  };
  return { ...sent, done, submit };
}

export function ProfileForm({ userId, human, onSaved }: { userId: string; human: Human; onSaved: () => void }) {
  const { api } = useConsole();
  const [profile, setProfile] = useState(human.profile);
  const set = (field: keyof Human['profile']) => (value: string) => setProfile({ ...profile, [field]: value });
  const save = useSaved(() => api.call('PUT', `/management/v1/users/${userId}/profile`, profile), onSaved);
  const v = save.violations;
  return (
    <form noValidate class="panel" onSubmit={save.submit} aria-labelledby="profile-heading">
      <h2 id="profile-heading">{t('profile')}</h2>
      <Field label={t('firstName')} name="firstName" value={profile.firstName} onInput={set('firstName')} required violations={v} />
      <Field label={t('lastName')} name="lastName" value={profile.lastName} onInput={set('lastName')} required violations={v} />
      <Field label={t('displayName')} name="displayName" value={profile.displayName} onInput={set('displayName')} violations={v} />
      <Field label={t('nickName')} name="nickName" value={profile.nickName} onInput={set('nickName')} violations={v} />
      <Field label={t('preferredLanguage')} name="preferredLanguage" value={profile.preferredLanguage} onInput={set('preferredLanguage')} violations={v} />
      <Select label={t('gender')} value={profile.gender} onChange={set('gender')} options={GENDERS.map((g): [string, string] => [g, t(g)])} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {t('save')}
        </button>
      </div>
      <Status ok={save.done} error={save.error} />
    </form>
  );
}

export function UserNameForm({ userId, userName, onSaved }: { userId: string; userName: string; onSaved: () => void }) {
  const { api } = useConsole();
  const [value, setValue] = useState(userName);
  const save = useSaved(() => api.call('PUT', `/management/v1/users/${userId}/username`, { userName: value }), onSaved);
  return (
    <form noValidate class="inline" onSubmit={save.submit} aria-label={t('changeLoginName')}>
      <Field label={t('userName')} name="userName" value={value} onInput={setValue} required violations={save.violations} />
      <button type="submit" disabled={save.busy}>
        {t('changeLoginName')}
      </button>
      <Status ok={save.done} error={save.error} />
    </form>
  );
}

const verification = (verified: boolean) => <span class="badge">({verified ? t('verified') : t('notVerified')})</span>;

/** `children`: what else the section offers for the address (the mails an admin sends). */
export function ContactForm({ userId, human, onSaved, children }: { userId: string; human: Human; onSaved: () => void; children?: ComponentChildren }) {
  const { api } = useConsole();
  const [phone, setPhone] = useState(human.phone.phone);
  const save = useSaved(() => api.call('PUT', `/management/v1/users/${userId}/phone`, { phone: phone.trim() }), onSaved);
  return (
    <section class="panel" aria-labelledby="contact-heading">
      <h2 id="contact-heading">{t('contact')}</h2>
      <p>
        {t('email')}: {human.email.email} {verification(human.email.isEmailVerified)}
      </p>
      {human.phone.phone && (
        <p>
          {t('phone')}: {human.phone.phone} {verification(human.phone.isPhoneVerified)}
        </p>
      )}
      <form noValidate class="inline" onSubmit={save.submit} aria-label={t('phone')}>
        <Field label={t('phone')} name="phone" value={phone} onInput={setPhone} help={t('phoneHelp')} violations={save.violations} autocomplete="off" />
        <button type="submit" disabled={save.busy}>
          {t('save')}
        </button>
        <Status ok={save.done} error={save.error} />
      </form>
      {children}
    </section>
  );
}
