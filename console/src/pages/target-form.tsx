import { useState } from 'preact/hooks';
import { Check, Field, Select, Status, useSubmit } from '../components.tsx';
import { ruleText, t } from '../i18n.ts';
import type { TargetView } from '../views.ts';
import type { TargetInput } from '../../../src/commands/actions.ts';
import type { TargetType } from '../../../src/domain/actions.ts';

// The form of an action target (docs/api/actions.md): name, https endpoint,
// timeout as the API writes it ("10s"), the kind of call and whether a
// failed call fails the request. The same body creates and changes it.

export const TARGET_TYPES: TargetType[] = ['restWebhook', 'restCall', 'restAsync'];

/** Fields with an input of their own; a violation of any other (the kind of call) is said under the kind. */
const SHOWN = ['name', 'endpoint', 'timeout'];

export interface TargetDraft {
  name: string;
  endpoint: string;
  timeout: string;
  type: TargetType;
  interruptOnError: boolean;
}

export const NEW_TARGET: TargetDraft = { name: '', endpoint: '', timeout: '10s', type: 'restWebhook', interruptOnError: false };

export const typeOf = (target: TargetView): TargetType => TARGET_TYPES.find((type) => target[type] !== undefined) ?? 'restAsync';

export function draftOf(target: TargetView): TargetDraft {
  const type = typeOf(target);
  const flags = type === 'restAsync' ? undefined : target[type];
  return { name: target.name, endpoint: target.endpoint, timeout: target.timeout, type, interruptOnError: flags?.interruptOnError ?? false };
}

function bodyOf(draft: TargetDraft): TargetInput {
  const kind = draft.type === 'restAsync' ? { restAsync: {} } : { [draft.type]: { interruptOnError: draft.interruptOnError } };
  return { name: draft.name.trim(), endpoint: draft.endpoint.trim(), timeout: draft.timeout.trim(), ...kind };
}

export function TargetForm<T>({
  initial,
  label,
  submitLabel,
  send,
  onDone,
}: {
  initial: TargetDraft;
  label: string;
  submitLabel: string;
  send: (body: TargetInput) => Promise<T>;
  onDone: (result: T) => void;
}) {
  const [draft, setDraft] = useState(initial);
  const { submit, busy, error, violations } = useSubmit(() => send(bodyOf(draft)), onDone);
  const set =
    <K extends keyof TargetDraft>(key: K) =>
    (value: TargetDraft[K]) =>
      setDraft({ ...draft, [key]: value });
  return (
    <form noValidate class="panel" onSubmit={submit} aria-label={label}>
      <Field label={t('name')} name="name" value={draft.name} onInput={set('name')} required violations={violations} />
      <Field label={t('endpoint')} name="endpoint" value={draft.endpoint} onInput={set('endpoint')} required violations={violations} />
      <Field label={t('timeout')} name="timeout" value={draft.timeout} onInput={set('timeout')} required help={t('timeoutHelp')} violations={violations} />
      <Select
        label={t('targetType')}
        value={draft.type}
        onChange={(type) => set('type')(type as TargetType)}
        options={TARGET_TYPES.map((type): [string, string] => [type, t(type)])}
      />
      {violations
        .filter((v) => !SHOWN.includes(v.field))
        .map((v) => (
          <p class="field-error" key={v.field}>
            {t(draft.type)}: {ruleText(v.description)}
          </p>
        ))}
      {draft.type !== 'restAsync' && <Check label={t('interruptOnError')} checked={draft.interruptOnError} onChange={set('interruptOnError')} />}
      <div class="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
      <Status error={error} />
    </form>
  );
}
