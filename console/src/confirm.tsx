import { useEffect, useRef, useState } from 'preact/hooks';
import { useId } from './components.tsx';
import { t } from './i18n.ts';

// A button for something that cannot be taken back (a removal, a key
// rotation, a policy reset): it asks first, in a modal dialog whose Cancel
// has the focus, so Enter or Escape on a stray click changes nothing.

interface ConfirmButtonProps {
  /** The button's text, also the dialog's button that goes ahead. */
  label: string;
  /** The question the dialog asks. */
  question: string;
  onConfirm: () => void;
  disabled?: boolean;
  /** `danger` (the default) for removals, `secondary` for milder changes. */
  kind?: 'danger' | 'secondary' | 'primary';
}

export function ConfirmButton({ label, question, onConfirm, disabled, kind = 'danger' }: ConfirmButtonProps) {
  const [open, setOpen] = useState(false);
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useId('confirm');
  useEffect(() => {
    if (open && !dialog.current?.open) dialog.current?.showModal();
  }, [open]);
  const close = () => {
    dialog.current?.close();
    setOpen(false);
  };
  const buttonClass = kind === 'primary' ? undefined : kind;
  return (
    <>
      <button type="button" class={buttonClass} disabled={disabled} onClick={() => setOpen(true)}>
        {label}
      </button>
      {open && (
        <dialog ref={dialog} aria-labelledby={`${id}-title`} aria-describedby={`${id}-question`} onClose={() => setOpen(false)}>
          <h2 id={`${id}-title`}>{t('confirm')}</h2>
          <p id={`${id}-question`}>{question}</p>
          <div class="actions">
            {/* biome-ignore lint/a11y/noAutofocus: the safe choice takes the focus in a dialog that asks before a removal (WAI-ARIA APG, alert dialog) */}
            <button type="button" class="secondary" autoFocus onClick={close}>
              {t('cancel')}
            </button>
            <button
              type="button"
              class={kind === 'danger' ? 'danger' : undefined}
              onClick={() => {
                close();
                onConfirm();
              }}
            >
              {label}
            </button>
          </div>
        </dialog>
      )}
    </>
  );
}
