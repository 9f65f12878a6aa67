import { useState } from 'preact/hooks';
import { Field, Heading, Loading, Select, Status, useConsole, useLoad, useSubmit } from '../components.tsx';
import { ConfirmButton } from '../confirm.tsx';
import { t, type MessageKey } from '../i18n.ts';
import type { MessageTextsView } from '../views.ts';
import {
  MESSAGE_TEXT_FIELDS,
  MESSAGE_TEXT_LANGUAGES,
  MESSAGE_TEXT_TYPES,
  PLACEHOLDERS,
  SINGLE_LINE_FIELDS,
  type MessageTextField,
  type MessageTextLanguage,
  type MessageTexts,
  type MessageTextType,
} from '../../../src/domain/message-texts.ts';

// The org's own wording of the messages it sends (docs/api/message-texts.md,
// ORG_OWNER): one message type in one language at a time, shown as its
// users get it (the org's texts over the built-in ones), saved whole, or
// reset to the built-in texts after a confirmation.

const FIELD_LABELS: Record<MessageTextField, MessageKey> = {
  title: 'textTitle',
  preHeader: 'textPreHeader',
  subject: 'textSubject',
  greeting: 'textGreeting',
  text: 'textText',
  buttonText: 'textButtonText',
  footerText: 'textFooterText',
};

const LANGUAGE_LABELS: Record<MessageTextLanguage, MessageKey> = { en: 'langEn', de: 'langDe' };

const withoutDetails = ({ details: _details, ...texts }: MessageTextsView['customText']): MessageTexts => texts;

function TextsForm({ path, texts, onSaved }: { path: string; texts: MessageTexts; onSaved: () => void }) {
  const { api } = useConsole();
  const [value, setValue] = useState(texts);
  const save = useSubmit(() => api.call('PUT', path, value), onSaved);
  return (
    <form noValidate onSubmit={save.submit} aria-label={t('messageTexts')}>
      {MESSAGE_TEXT_FIELDS.map((field) => (
        <Field
          key={field}
          label={t(FIELD_LABELS[field])}
          name={field}
          value={value[field]}
          onInput={(v) => setValue({ ...value, [field]: v })}
          multiline={!SINGLE_LINE_FIELDS.includes(field)}
          violations={save.violations}
        />
      ))}
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          {t('save')}
        </button>
      </div>
      <Status error={save.error} />
    </form>
  );
}

export function MessageTextsPage() {
  const { api, orgId } = useConsole();
  const [type, setType] = useState<MessageTextType>(MESSAGE_TEXT_TYPES[0]);
  const [language, setLanguage] = useState<MessageTextLanguage>(MESSAGE_TEXT_LANGUAGES[0]);
  const [done, setDone] = useState('');
  const path = `/management/v1/text/message/${type}/${language}`;
  // The answer names its path: while another message loads, the last one's texts are not shown under the new name.
  const loaded = useLoad(() => api.call<MessageTextsView>('GET', path).then((view) => ({ path, view })), [orgId, path]);
  const texts = { data: loaded.data?.path === path ? loaded.data.view : undefined, error: loaded.error, reload: loaded.reload };
  const changed = (what: string) => () => {
    setDone(what);
    texts.reload();
  };
  const reset = useSubmit(() => api.call('DELETE', path), changed(t('saved')));
  // The selects offer only the service's own lists.
  const choose =
    <T extends string>(set: (value: T) => void) =>
    (value: string) => {
      setDone('');
      set(value as T);
    };
  return (
    <>
      <Heading>{t('messageTexts')}</Heading>
      <div class="filters">
        <Select
          label={t('messageType')}
          value={type}
          onChange={choose<MessageTextType>(setType)}
          options={MESSAGE_TEXT_TYPES.map((name): [string, string] => [name, t(name)])}
        />
        <Select
          label={t('messageLanguage')}
          value={language}
          onChange={choose<MessageTextLanguage>(setLanguage)}
          options={MESSAGE_TEXT_LANGUAGES.map((lang): [string, string] => [lang, t(LANGUAGE_LABELS[lang])])}
        />
      </div>
      <p class="help">{t('placeholders', { list: PLACEHOLDERS.map((name) => `{{.${name}}}`).join(', ') })}</p>
      {!texts.data ? (
        <Loading error={texts.error} />
      ) : (
        <section class="panel" aria-labelledby="texts-heading">
          <h2 id="texts-heading">
            {t(type)} ({t(LANGUAGE_LABELS[language])})
          </h2>
          <p>{texts.data.isDefault ? t('textsDefault') : t('textsOwn')}</p>
          <TextsForm key={JSON.stringify(texts.data)} path={path} texts={withoutDetails(texts.data.customText)} onSaved={changed(t('saved'))} />
          {!texts.data.isDefault && (
            <ConfirmButton label={t('resetTexts')} question={t('confirmResetTexts')} onConfirm={() => reset.submit()} disabled={reset.busy} kind="secondary" />
          )}
          <Status ok={done} error={reset.error} />
        </section>
      )}
    </>
  );
}
