import { useState } from 'preact/hooks';
import type { FieldViolation } from '../api.ts';
import { Check, Field, Heading, Loading, SaveEnd, Select, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { labelOf, ruleText, t, type MessageKey } from '../i18n.ts';
import type { OrgPolicyView, PolicyView } from '../views.ts';
import { PASSWORDLESS_TYPES, SECOND_FACTOR_TYPES } from '../../../src/domain/policies/login.ts';

// Policies of every kind the API has (docs/api/policies.md): what applies in
// the acting org (its own or the instance default), and for instance owners
// the instance default. Each field is shown by its type and labelled in
// words (messages/), so a kind added to the API needs only its labels here.
// A number field left empty is an error shown beside it, never a 0 (for the
// lock duration 0 means "until an admin unlocks").

const KINDS: Array<{ kind: string; title: MessageKey }> = [
  { kind: 'lockout', title: 'lockoutPolicy' },
  { kind: 'login', title: 'loginPolicy' },
  { kind: 'password_complexity', title: 'passwordComplexityPolicy' },
];

/** Choices of the enum fields the policies have: the service's own lists, bundled in. */
const ENUMS: Record<string, readonly string[]> = {
  passwordlessType: PASSWORDLESS_TYPES,
  secondFactors: SECOND_FACTOR_TYPES,
};

type Settings = Record<string, unknown>;
/** The form's values: numbers as typed (a string), checked before anything is sent. */
type Draft = Record<string, unknown>;

const WHOLE_NUMBER = /^\d{1,10}$/;

function toDraft(settings: Settings): Draft {
  return Object.fromEntries(Object.entries(settings).map(([field, value]) => [field, typeof value === 'number' ? String(value) : value]));
}

/** The settings to send, or the fields whose number is missing or not a whole number. */
function fromDraft(draft: Draft, numbers: string[]): { settings?: Settings; violations: FieldViolation[] } {
  const violations = numbers
    .filter((field) => !WHOLE_NUMBER.test(String(draft[field]).trim()))
    .map((field) => ({ field, description: String(draft[field]).trim() ? t('notANumber') : t('required') }));
  if (violations.length) return { violations };
  return { settings: Object.fromEntries(Object.entries(draft).map(([f, v]) => [f, numbers.includes(f) ? Number(String(v).trim()) : v])), violations };
}

function ChoiceList({ field, current, problems, onChange }: { field: string; current: string[]; problems: FieldViolation[]; onChange: (v: string[]) => void }) {
  return (
    <fieldset aria-describedby={problems.length ? `${field}-error` : undefined}>
      <legend>{labelOf(field)}</legend>
      {(ENUMS[field] ?? current).map((choice) => (
        <Check
          key={choice}
          label={labelOf(choice)}
          checked={current.includes(choice)}
          onChange={(on) => onChange(on ? [...current, choice] : current.filter((c) => c !== choice))}
        />
      ))}
      {problems.length > 0 && (
        <p class="field-error" id={`${field}-error`}>
          {problems.map((p) => ruleText(p.description)).join('; ')}
        </p>
      )}
    </fieldset>
  );
}

/** The form of one policy; `onSaved` reports a save to the section, whose status outlives a form started afresh from the saved policy. */
function PolicyForm({
  settings,
  save,
  saveLabel,
  onSaved,
}: {
  settings: Settings;
  save: (settings: Settings) => Promise<unknown>;
  saveLabel: string;
  onSaved: () => void;
}) {
  const numbers = Object.keys(settings).filter((field) => typeof settings[field] === 'number');
  const [value, setValue] = useState(toDraft(settings));
  const [local, setLocal] = useState<FieldViolation[]>([]);
  const sent = useSubmit(() => save(fromDraft(value, numbers).settings!), onSaved);
  const submit = (event: Event) => {
    event.preventDefault();
    const checked = fromDraft(value, numbers);
    setLocal(checked.violations);
    if (checked.settings) void sent.submit();
  };
  const violations = local.length ? local : sent.violations;
  const set = (field: string) => (v: unknown) => setValue({ ...value, [field]: v });
  return (
    <form noValidate onSubmit={submit} aria-label={saveLabel}>
      {Object.entries(value).map(([field, current]) => {
        if (typeof current === 'boolean') return <Check key={field} label={labelOf(field)} checked={current} onChange={set(field)} />;
        if (numbers.includes(field))
          return (
            <Field
              key={field}
              label={labelOf(field)}
              name={field}
              type="number"
              value={String(current)}
              onInput={set(field)}
              required
              violations={violations}
            />
          );
        if (Array.isArray(current))
          return (
            <ChoiceList key={field} field={field} current={current as string[]} problems={violations.filter((v) => v.field === field)} onChange={set(field)} />
          );
        if (ENUMS[field])
          return (
            <Select
              key={field}
              label={labelOf(field)}
              value={String(current)}
              onChange={set(field)}
              options={ENUMS[field]!.map((c): [string, string] => [c, labelOf(c)])}
            />
          );
        return <Field key={field} label={labelOf(field)} name={field} value={String(current ?? '')} onInput={set(field)} violations={violations} />;
      })}
      <SaveEnd busy={sent.busy} error={sent.error} checkedHere={local.length > 0} />
    </form>
  );
}

const withoutDetails = ({ details: _details, ...settings }: Settings) => settings;

function OrgPolicy({ kind, title }: { kind: string; title: string }) {
  const { api, orgId } = useConsole();
  const path = `/management/v1/policies/${kind}`;
  const policy = useLoad(() => api.call<OrgPolicyView<Settings>>('GET', path), [orgId, kind]);
  const [done, setDone] = useState('');
  const reset = useSubmit(
    () => api.call('DELETE', path),
    () => {
      setDone(t('saved'));
      policy.reload();
    },
  );
  if (!policy.data) return <Loading error={policy.error} />;
  return (
    <section aria-labelledby={`${kind}-org`}>
      <h3 id={`${kind}-org`}>{t('orgPolicy')}</h3>
      <p>{policy.data.isDefault ? t('followsDefault') : t('ownPolicy')}</p>
      <PolicyForm
        key={JSON.stringify(policy.data)}
        settings={withoutDetails(policy.data.policy)}
        save={(s) => api.call('PUT', path, s)}
        saveLabel={`${t('orgPolicy')}: ${title}`}
        onSaved={() => {
          setDone(t('saved'));
          policy.reload();
        }}
      />
      {!policy.data.isDefault && (
        <ConfirmButton label={t('resetToDefault')} question={t('confirmReset')} onConfirm={() => reset.submit()} disabled={reset.busy} kind="secondary" />
      )}
      <Status ok={done} error={reset.error} />
    </section>
  );
}

function InstancePolicy({ kind, title }: { kind: string; title: string }) {
  const { api } = useConsole();
  const path = `/admin/v1/policies/${kind}`;
  const policy = useLoad(() => api.call<PolicyView<Settings>>('GET', path), [kind]);
  const [done, setDone] = useState('');
  if (!policy.data) return <Loading error={policy.error} />;
  return (
    <section aria-labelledby={`${kind}-instance`}>
      <h3 id={`${kind}-instance`}>{t('instanceDefault')}</h3>
      <PolicyForm
        settings={withoutDetails(policy.data.policy)}
        save={(s) => api.call('PUT', path, s)}
        saveLabel={`${t('instanceDefault')}: ${title}`}
        onSaved={() => setDone(t('saved'))}
      />
      <Status ok={done} />
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
          <OrgPolicy kind={kind} title={t(title)} />
          {iamOwner && <InstancePolicy kind={kind} title={t(title)} />}
        </section>
      ))}
    </>
  );
}
