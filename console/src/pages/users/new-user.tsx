import { useState } from 'preact/hooks';
import { DEFAULT_MACHINE_ACCESS_TOKEN_TYPE, type MachineAccessTokenType } from '../../../../src/domain/users.ts';
import { Field, Select, Status, useConsole, useSubmit } from '../../components.tsx';
import { t } from '../../i18n.ts';

// The form for a new user of the acting org: a human (login name, email,
// name, optional password) or a machine (name, description, token type).

const TOKEN_TYPES: Record<MachineAccessTokenType, string> = { ACCESS_TOKEN_TYPE_BEARER: 'Bearer', ACCESS_TOKEN_TYPE_JWT: 'JWT' };

export function NewUser({ onCreated, onCancel }: { onCreated: (name: string) => void; onCancel: () => void }) {
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
    accessTokenType: DEFAULT_MACHINE_ACCESS_TOKEN_TYPE as string,
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
          <Select label={t('accessTokenType')} value={form.accessTokenType} onChange={set('accessTokenType')} options={Object.entries(TOKEN_TYPES)} />
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
