import { useState } from 'preact/hooks';
import { Check, Field, Select, Status, useId, useSubmit } from '../components.tsx';
import { labelOf, t, type MessageKey } from '../i18n.ts';
import { base64Of, textOf } from '../base64.ts';
import { IDP_KINDS, PROVIDER_OPTION_DEFAULTS, type IdpKind, type ProviderOptions } from '../../../src/domain/idps.ts';

// The form of one identity provider (docs/api/idps.md): the fields of its
// kind, taken from the service's own list of kinds (src/domain/idps.ts,
// bundled in), and what the provider may do. The kind's secret (a client
// secret, an LDAP bind password) is write-only: on a change an empty field
// keeps the stored one. An object field (the LDAP `attributes`) is a group
// of text fields, kept in the draft as `attributes.idAttribute` and so on;
// a field of named values (a SAML provider's `binding`) is a choice; a
// document field (a SAML IdP's `metadataXml`) is pasted as its XML and sent
// as the API takes it, base64; a PEM field (an LDAP provider's `rootCa`) is
// pasted and sent as it is.

/** Where a provider lives: the acting org's own (`/management/v1`) or the instance's (`/admin/v1`). */
export type IdpScope = 'org' | 'instance';
export const scopePrefix = (scope: IdpScope) => (scope === 'org' ? '/management/v1' : '/admin/v1');

export const KINDS = [...IDP_KINDS.values()];
export const kindOfType = (type: string): IdpKind | undefined => KINDS.find((kind) => kind.type === type);

const OPTIONS = Object.keys(PROVIDER_OPTION_DEFAULTS) as Array<keyof ProviderOptions>;

/** The form's values: text as typed (scopes space-separated), booleans as checked. */
export type IdpDraft = { name: string; options: ProviderOptions; values: Record<string, string | boolean> };

export function emptyDraft(): IdpDraft {
  return { name: '', options: { ...PROVIDER_OPTION_DEFAULTS }, values: {} };
}

type ConfigValue = string | boolean | string[] | Record<string, string>;

/** A stored provider's view as the form's values (its secret is never part of it). */
export function draftOf(idp: { name: string; providerOptions: ProviderOptions; config: Record<string, ConfigValue> }): IdpDraft {
  const values: Record<string, string | boolean> = {};
  for (const [field, value] of Object.entries(idp.config)) {
    if (Array.isArray(value)) values[field] = value.join(' ');
    else if (typeof value === 'object') for (const [sub, text] of Object.entries(value)) values[`${field}.${sub}`] = text;
    else values[field] = DOCUMENT_FIELDS.has(field) && typeof value === 'string' ? (textOf(value) ?? value) : value;
  }
  return { name: idp.name, options: { ...idp.providerOptions }, values };
}

/** Fields holding a document the API takes as base64 (a SAML IdP's metadata): typed and shown as its text. */
const DOCUMENT_FIELDS: ReadonlySet<string> = new Set(['metadataXml']);

/** Fields of several lines taken as typed: PEM certificates. */
const PEM_FIELDS: ReadonlySet<string> = new Set(['rootCa']);

const fieldType = (kind: IdpKind, field: string) => (kind.properties[field] as { type?: string }).type;
const subFields = (kind: IdpKind, field: string) => Object.keys((kind.properties[field] as { properties?: object }).properties ?? {});

/** The help under a field: a secret left empty on a change is kept; PEM and lists say how to write them. */
function helpOf(kind: IdpKind, field: string, changing: boolean): string | undefined {
  if (field === kind.secretField && changing) return t('secretUnchanged');
  if (PEM_FIELDS.has(field)) return t('rootCaHelp');
  if (fieldType(kind, field) === 'array') return t(field === 'scopes' ? 'scopesHelp' : 'spaceSeparatedHelp');
  return undefined;
}

/** The body of create or change: empty text left out (the kind's defaults apply; on a change the secret is kept). */
function bodyOf(kind: IdpKind, draft: IdpDraft): Record<string, unknown> {
  const body: Record<string, unknown> = { name: draft.name.trim(), providerOptions: draft.options };
  for (const field of Object.keys(kind.properties)) {
    const value = draft.values[field];
    if (typeof value === 'boolean') body[field] = value;
    else if (fieldType(kind, field) === 'object') {
      const group = Object.fromEntries(
        subFields(kind, field)
          .map((sub) => [sub, String(draft.values[`${field}.${sub}`] ?? '').trim()])
          .filter(([, text]) => text),
      );
      if (Object.keys(group).length) body[field] = group;
    } else if (fieldType(kind, field) === 'array') {
      const tokens = String(value ?? '')
        .split(/\s+/)
        .filter(Boolean);
      if (tokens.length) body[field] = tokens;
    } else if (typeof value === 'string' && value.trim())
      body[field] = field === kind.secretField ? value : DOCUMENT_FIELDS.has(field) ? base64Of(value.trim()) : value.trim();
  }
  return body;
}

/** A provider option with what it means, the explanation tied to its checkbox. */
function OptionCheck({ option, checked, onChange }: { option: keyof ProviderOptions; checked: boolean; onChange: (on: boolean) => void }) {
  const id = useId(option);
  return (
    <div>
      <div class="check">
        <input id={id} type="checkbox" checked={checked} aria-describedby={`${id}-help`} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} />
        <label for={id}>{t(option)}</label>
      </div>
      <p class="help" id={`${id}-help`}>
        {t(`${option}Help` as MessageKey)}
      </p>
    </div>
  );
}

export function IdpForm<T>({
  initial,
  fixedKind,
  label,
  submitLabel,
  send,
  onDone,
}: {
  initial: IdpDraft;
  /** A change keeps the provider's kind; a new provider chooses one. */
  fixedKind?: IdpKind;
  label: string;
  submitLabel: string;
  send: (kind: IdpKind, body: Record<string, unknown>) => Promise<T>;
  onDone: (result: T) => void;
}) {
  const [kindName, setKindName] = useState(fixedKind?.name ?? KINDS[0]!.name);
  const kind = fixedKind ?? IDP_KINDS.get(kindName)!;
  const [draft, setDraft] = useState(initial);
  const { submit, busy, error, violations } = useSubmit(() => send(kind, bodyOf(kind, draft)), onDone);
  const setValue = (field: string) => (value: string | boolean) => setDraft({ ...draft, values: { ...draft.values, [field]: value } });
  return (
    <form noValidate class="panel" onSubmit={submit} aria-label={label}>
      {!fixedKind && (
        <Select label={t('idpKind')} value={kindName} onChange={setKindName} options={KINDS.map((k): [string, string] => [k.name, labelOf(k.type)])} />
      )}
      <Field label={t('name')} name="name" value={draft.name} onInput={(name) => setDraft({ ...draft, name })} required violations={violations} />
      {Object.keys(kind.properties).map((field) => {
        const type = fieldType(kind, field);
        if (type === 'boolean') return <Check key={field} label={labelOf(field)} checked={draft.values[field] === true} onChange={setValue(field)} />;
        const choices = (kind.properties[field] as { enum?: string[] }).enum;
        if (choices)
          return (
            <Select
              key={`${kind.name}-${field}`}
              label={labelOf(field)}
              value={String(draft.values[field] ?? kind.defaults[field] ?? choices[0])}
              onChange={setValue(field)}
              options={choices.map((choice): [string, string] => [choice, labelOf(choice)])}
            />
          );
        if (type === 'object')
          return (
            <fieldset key={`${kind.name}-${field}`}>
              <legend>{labelOf(field)}</legend>
              {subFields(kind, field).map((sub) => (
                <Field
                  key={sub}
                  label={labelOf(`${field}.${sub}`)}
                  name={`${field}.${sub}`}
                  value={String(draft.values[`${field}.${sub}`] ?? '')}
                  onInput={setValue(`${field}.${sub}`)}
                  required={kind.required.includes(field) && sub === 'idAttribute'}
                  violations={violations}
                  fields={[field, `${field}.${sub}`]}
                />
              ))}
            </fieldset>
          );
        const secret = field === kind.secretField;
        return (
          <Field
            key={`${kind.name}-${field}`}
            label={labelOf(field)}
            name={field}
            type={secret ? 'password' : 'text'}
            autocomplete={secret ? 'new-password' : 'off'}
            value={String(draft.values[field] ?? '')}
            onInput={setValue(field)}
            required={kind.required.includes(field) && !(secret && fixedKind)}
            multiline={DOCUMENT_FIELDS.has(field) || PEM_FIELDS.has(field)}
            help={helpOf(kind, field, !!fixedKind)}
            violations={violations}
            fields={type === 'array' ? [field, ...Array.from({ length: 30 }, (_, i) => `${field}[${i}]`)] : [field]}
          />
        );
      })}
      <fieldset>
        <legend>{t('providerOptions')}</legend>
        {OPTIONS.map((option) => (
          <OptionCheck
            key={option}
            option={option}
            checked={draft.options[option]}
            onChange={(on) => setDraft({ ...draft, options: { ...draft.options, [option]: on } })}
          />
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
      <Status error={error} />
    </form>
  );
}
