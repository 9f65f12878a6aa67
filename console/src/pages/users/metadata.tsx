import { useState } from 'preact/hooks';
import { Field, Status, useAction, useConsole, useLoad, useSubmit } from '../../components.tsx';
import { ConfirmButton } from '../../confirm.tsx';
import { t } from '../../i18n.ts';
import { ResultTable, type Column } from '../../result-table.tsx';
import type { MetadataView, SearchResult } from '../../views.ts';
import { MAX_METADATA_KEYS } from '../../../../src/domain/user-metadata.ts';
import { base64Of, bytesOf, textOf } from '../../base64.ts';

// A user's metadata (docs/api/users.md, "Metadata"): bytes on the wire in
// base64 (RFC 4648 4), shown here as text when they are UTF-8 and typed as
// text; a key is set (added or replaced) and removed after a confirmation.
// A user holds at most MAX_METADATA_KEYS keys, so one search lists them all.

/** The value as text, or how many bytes it holds when they are not UTF-8 text. */
function shownValue(base64: string): string {
  return textOf(base64) ?? t('metadataBinary', { bytes: bytesOf(base64).length });
}

export function Metadata({ userId }: { userId: string }) {
  const { api, orgId } = useConsole();
  const base = `/management/v1/users/${userId}/metadata`;
  const list = useLoad(() => api.call<SearchResult<MetadataView>>('POST', `${base}/_search`, { query: { limit: MAX_METADATA_KEYS } }), [orgId, userId]);
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [done, setDone] = useState('');
  const changed = (what: string) => {
    setDone(what);
    list.reload();
  };
  const save = useSubmit(
    () => api.call('POST', `${base}/${encodeURIComponent(key.trim())}`, { value: base64Of(value) }),
    () => {
      setKey('');
      setValue('');
      changed(t('saved'));
    },
  );
  const removal = useAction(
    (name: string) => api.call('DELETE', `${base}/${encodeURIComponent(name)}`),
    () => changed(t('removed')),
  );
  const columns: Array<Column<MetadataView>> = [
    { header: t('metadataKey'), cell: (m) => <code>{m.key}</code> },
    { header: t('metadataValue'), cell: (m) => shownValue(m.value) },
    {
      header: t('remove'),
      cell: (m) => (
        <ConfirmButton label={t('remove')} question={t('confirmRemove', { name: m.key })} onConfirm={() => void removal.run(m.key)} disabled={removal.busy} />
      ),
    },
  ];
  const submit = (event: Event) => {
    setDone('');
    return save.submit(event);
  };
  return (
    <section aria-labelledby="metadata-heading">
      <h2 id="metadata-heading">{t('metadata')}</h2>
      <ResultTable caption={t('metadata')} columns={columns} rowKey={(m) => m.key} list={list} empty={t('noMetadata')} />
      <form noValidate class="inline" onSubmit={submit} aria-label={t('addMetadata')}>
        <Field label={t('metadataKey')} name="key" value={key} onInput={setKey} required violations={save.violations} />
        <Field label={t('metadataValue')} name="value" value={value} onInput={setValue} required violations={save.violations} />
        <button type="submit" disabled={save.busy}>
          {t('addMetadata')}
        </button>
      </form>
      <Status ok={done} error={save.error ?? removal.error} />
    </section>
  );
}
