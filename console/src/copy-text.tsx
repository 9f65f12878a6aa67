import { useCopy, useId } from './components.tsx';
import { t } from './i18n.ts';

// An address another party needs (the redirect URI to register at an
// upstream provider, our SAML metadata for a service provider): shown in
// full and copied with one button, so nobody retypes it.

export function CopyText({ label, value, help }: { label: string; value: string; help?: string }) {
  const { copied, copy } = useCopy(value);
  const id = useId('copy');
  return (
    <section class="panel" aria-labelledby={`${id}-label`}>
      <h2 id={`${id}-label`}>{label}</h2>
      {help && <p class="help">{help}</p>}
      <p>
        <code data-copy={label}>{value}</code>
      </p>
      <div class="actions">
        <button type="button" class="secondary" aria-label={`${t('copy')}: ${label}`} onClick={copy}>
          {t('copy')}
        </button>
        <span role="status">{copied ? t('copied') : ''}</span>
      </div>
    </section>
  );
}
