import { useState } from 'preact/hooks';
import { Check, Field, Heading, Loading, Select, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { labelOf, t, type MessageKey } from '../i18n.ts';
import type { OrgPolicyView, PolicyView } from '../views.ts';

// Policies of every kind the API has (docs/api/policies.md): what applies in
// the acting org (its own or the instance default), and for instance owners
// the instance default. Each field is shown by its type, so a kind added to
// the API needs only its labels here.

const KINDS: Array<{ kind: string; title: MessageKey }> = [
  { kind: 'lockout', title: 'lockoutPolicy' },
  { kind: 'login', title: 'loginPolicy' },
];

/** Choices of the enum fields the policies have. */
const ENUMS: Record<string, string[]> = {
  passwordlessType: ['PASSWORDLESS_TYPE_ALLOWED', 'PASSWORDLESS_TYPE_NOT_ALLOWED'],
  secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_U2F'],
};

type Settings = Record<string, unknown>;

function PolicyForm({ settings, save, saveLabel }: { settings: Settings; save: (settings: Settings) => Promise<unknown>; saveLabel: string }) {
  const [value, setValue] = useState(settings);
  const [done, setDone] = useState('');
  const { submit, busy, error, violations } = useSubmit(
    () => save(value),
    () => setDone(t('saved')),
  );
  const set = (field: string) => (v: unknown) => setValue({ ...value, [field]: v });
  return (
    <form noValidate onSubmit={submit} aria-label={saveLabel}>
      {Object.entries(value).map(([field, current]) => {
        if (typeof current === 'boolean') return <Check key={field} label={labelOf(field)} checked={current} onChange={set(field)} />;
        if (typeof current === 'number')
          return (
            <Field
              key={field}
              label={labelOf(field)}
              name={field}
              type="number"
              value={String(current)}
              onInput={(v) => set(field)(Number(v))}
              violations={violations}
            />
          );
        if (Array.isArray(current)) {
          const problems = violations.filter((v) => v.field === field);
          return (
            <fieldset key={field} aria-describedby={problems.length ? `${field}-error` : undefined}>
              <legend>{labelOf(field)}</legend>
              {(ENUMS[field] ?? current).map((choice: string) => (
                <Check
                  key={choice}
                  label={choice}
                  checked={current.includes(choice)}
                  onChange={(on) => set(field)(on ? [...current, choice] : current.filter((c: string) => c !== choice))}
                />
              ))}
              {problems.length > 0 && (
                <p class="field-error" id={`${field}-error`}>
                  {problems.map((p) => p.description).join('; ')}
                </p>
              )}
            </fieldset>
          );
        }
        if (ENUMS[field])
          return (
            <Select
              key={field}
              label={labelOf(field)}
              value={String(current)}
              onChange={set(field)}
              options={ENUMS[field]!.map((c): [string, string] => [c, c])}
            />
          );
        return <Field key={field} label={labelOf(field)} name={field} value={String(current ?? '')} onInput={set(field)} violations={violations} />;
      })}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('save')}
        </button>
      </div>
      <Status ok={done} error={error} />
    </form>
  );
}

const withoutDetails = ({ details: _details, ...settings }: Settings) => settings;

function OrgPolicy({ kind }: { kind: string }) {
  const { api, orgId } = useConsole();
  const path = `/management/v1/policies/${kind}`;
  const policy = useLoad(() => api.call<OrgPolicyView<Settings>>('GET', path), [orgId, kind]);
  const reset = useSubmit(
    () => api.call('DELETE', path),
    () => policy.reload(),
  );
  if (!policy.data) return <Loading error={policy.error} />;
  return (
    <section aria-labelledby={`${kind}-org`}>
      <h3 id={`${kind}-org`}>{t('orgPolicy')}</h3>
      <p>{policy.data.isDefault ? t('followsDefault') : t('ownPolicy')}</p>
      <PolicyForm
        key={JSON.stringify(policy.data)}
        settings={withoutDetails(policy.data.policy)}
        save={(s) => api.call('PUT', path, s).then(() => policy.reload())}
        saveLabel={`${t('orgPolicy')}: ${kind}`}
      />
      {!policy.data.isDefault && (
        <button type="button" class="secondary" onClick={() => reset.submit()}>
          {t('resetToDefault')}
        </button>
      )}
      <Status error={reset.error} />
    </section>
  );
}

function InstancePolicy({ kind }: { kind: string }) {
  const { api } = useConsole();
  const path = `/admin/v1/policies/${kind}`;
  const policy = useLoad(() => api.call<PolicyView<Settings>>('GET', path), [kind]);
  if (!policy.data) return <Loading error={policy.error} />;
  return (
    <section aria-labelledby={`${kind}-instance`}>
      <h3 id={`${kind}-instance`}>{t('instanceDefault')}</h3>
      <PolicyForm settings={withoutDetails(policy.data.policy)} save={(s) => api.call('PUT', path, s)} saveLabel={`${t('instanceDefault')}: ${kind}`} />
    </section>
  );
}

export function PoliciesPage() {
  const { iamOwner } = useConsole();
  return (
    <>
      <Heading>{t('policies')}</Heading>
      {KINDS.map(({ kind, title }) => (
        <section key={kind} aria-labelledby={`${kind}-heading`} class="panel">
          <h2 id={`${kind}-heading`}>{t(title)}</h2>
          <OrgPolicy kind={kind} />
          {iamOwner && <InstancePolicy kind={kind} />}
        </section>
      ))}
    </>
  );
}
