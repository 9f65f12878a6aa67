import { createContext, type ComponentChildren } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type Api, type FieldViolation } from './api.ts';
import { errorText, ruleText, t } from './i18n.ts';
import { hasNavigated } from './router.ts';
import type { OrgView } from './views.ts';

export interface Console {
  api: Api;
  /** Holds IAM_OWNER: sees every org and the instance pages. */
  iamOwner: boolean;
  /** The org the pages act on (x-service-orgid), from the address. */
  orgId: string;
  /** That org as the org list has it (instance owners only: others cannot list orgs). */
  org?: OrgView;
  /** Reads the org list again (after a rename or a new org). */
  reloadOrgs: () => void;
  /** The service's issuer (callback and metadata addresses to give other parties). */
  issuer: string;
}

export const ConsoleContext = createContext<Console>(undefined as unknown as Console);
export const useConsole = () => useContext(ConsoleContext);

/** The result of an API call and a way to run it again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: Error; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: Error }>({});
  const [round, setRound] = useState(0);
  useEffect(() => {
    let current = true;
    load().then(
      (data) => current && setState({ data }),
      (error: Error) => current && setState({ error }),
    );
    return () => {
      current = false;
    };
  }, [...deps, round]);
  return { ...state, reload: useCallback(() => setRound((r) => r + 1), []) };
}

export function message(error: unknown): string {
  if (error instanceof ApiError && error.violations.length) return t('checkFields');
  if (error instanceof ApiError) return errorText(error.code, error.message);
  return t('errorPrefix', { message: error instanceof Error ? error.message : String(error) });
}

/**
 * Page heading that takes the focus when the user moves to its page, so
 * screen readers announce it; on the first page the browser opens, focus
 * stays at the start, where the skip link is.
 */
export function Heading({ children }: { children: ComponentChildren }) {
  const ref = useRef<HTMLHeadingElement>(null);
  // Decided when the heading first renders: its effect runs only after the
  // next paint, and by then the skip link may already have been followed,
  // which counts as moving within the console; the focus it gave stays.
  const [takesFocus] = useState(hasNavigated);
  useEffect(() => {
    if (takesFocus) ref.current?.focus();
  }, []);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {children}
    </h1>
  );
}

/** What just happened, said to screen readers too (a live region). */
export function Status({ ok, error }: { ok?: string; error?: unknown }) {
  return (
    <div role="status" class={error ? 'status error' : ok ? 'status ok' : 'status'}>
      {error ? message(error) : (ok ?? '')}
    </div>
  );
}

export function Loading({ error }: { error?: unknown }) {
  return error ? (
    <p class="status error" role="alert">
      {message(error)}
    </p>
  ) : (
    <p role="status">{t('loading')}</p>
  );
}

let nextId = 0;
export function useId(prefix: string): string {
  const ref = useRef('');
  if (!ref.current) ref.current = `${prefix}-${++nextId}`;
  return ref.current;
}

interface FieldProps {
  label: string;
  name: string;
  value: string;
  onInput: (value: string) => void;
  type?: 'text' | 'email' | 'password' | 'search' | 'number';
  required?: boolean;
  help?: string;
  /** Violations of the last answer; those for `fields` are shown here. */
  violations?: FieldViolation[];
  fields?: string[];
  multiline?: boolean;
  autocomplete?: string;
}

/** A labelled input whose help and API errors are tied to it (aria-describedby). */
export function Field({
  label,
  name,
  value,
  onInput,
  type = 'text',
  required,
  help,
  violations = [],
  fields = [name],
  multiline,
  autocomplete = 'off',
}: FieldProps) {
  const id = useId(name);
  const problems = violations.filter((v) => fields.includes(v.field));
  const described = [help ? `${id}-help` : '', problems.length ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  const common = { id, name, required, 'aria-invalid': problems.length ? ('true' as const) : undefined, 'aria-describedby': described, autocomplete };
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {multiline ? (
        <textarea {...common} rows={3} value={value} onInput={(e) => onInput((e.target as HTMLTextAreaElement).value)} />
      ) : (
        // Preact pairs each input type with the attributes it allows; these fields use none of the special ones.
        <input {...common} type={type as 'text'} value={value} onInput={(e) => onInput((e.target as HTMLInputElement).value)} />
      )}
      {help && (
        <p class="help" id={`${id}-help`}>
          {help}
        </p>
      )}
      {problems.length > 0 && (
        <p class="field-error" id={`${id}-error`}>
          {problems.map((p) => ruleText(p.description)).join('; ')}
        </p>
      )}
    </div>
  );
}

export function Check({ label, checked, onChange, disabled }: { label: string; checked: boolean; onChange: (value: boolean) => void; disabled?: boolean }) {
  const id = useId('check');
  return (
    <div class="check">
      <input id={id} type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange((e.target as HTMLInputElement).checked)} />
      <label for={id}>{label}</label>
    </div>
  );
}

export function Select({
  label,
  value,
  options,
  onChange,
}: {
  label: string;
  value: string;
  options: Array<[string, string]>;
  onChange: (value: string) => void;
}) {
  const id = useId('select');
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange((e.target as HTMLSelectElement).value)}>
        {options.map(([v, text]) => (
          <option value={v} key={v}>
            {text}
          </option>
        ))}
      </select>
    </div>
  );
}

/** Copies `value` to the clipboard; `copied` says whether the last copy went through (for a status line). */
export function useCopy(value: string) {
  const [copied, setCopied] = useState(false);
  const copy = () =>
    navigator.clipboard?.writeText(value).then(
      () => setCopied(true),
      () => setCopied(false),
    );
  return { copied, copy };
}

/**
 * The end of a settings form: its save button, the API's answer, and a line
 * asking to check the fields when the page itself refused them (`checkedHere`)
 * before anything was sent.
 */
export function SaveEnd({ busy, error, checkedHere }: { busy: boolean; error: unknown; checkedHere: boolean }) {
  return (
    <>
      <div class="actions">
        <button type="submit" disabled={busy}>
          {t('save')}
        </button>
      </div>
      <Status error={checkedHere ? undefined : error} />
      {checkedHere && (
        <p class="status error" role="alert">
          {t('checkFields')}
        </p>
      )}
    </>
  );
}

/**
 * A secret the API shows once (client secret, PAT, key file): shown here with
 * a copy button and a download, and gone when the page is left.
 */
export function SecretOnce({ label, value, fileName }: { label: string; value: string; fileName: string }) {
  const { copied, copy } = useCopy(value);
  const [url, setUrl] = useState('');
  useEffect(() => {
    const made = URL.createObjectURL(new Blob([value], { type: fileName.endsWith('.json') ? 'application/json' : 'text/plain' }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [value]);
  const id = useId('secret');
  return (
    <section class="secret" aria-labelledby={`${id}-label`}>
      <h3 id={`${id}-label`}>{label}</h3>
      <p>{t('shownOnce')}</p>
      <pre data-secret={label}>{value}</pre>
      <div class="actions">
        <button type="button" onClick={copy}>
          {t('copy')}
        </button>
        <a class="button" href={url} download={fileName}>
          {t('download')}
        </a>
        <span role="status">{copied ? t('copied') : ''}</span>
      </div>
    </section>
  );
}

/** A form that reports the API's answer: field violations beside their fields, anything else in its status line. */
export function useSubmit<T>(action: () => Promise<T>, onDone?: (result: T) => void) {
  const run = useAction(action, onDone);
  const submit = (event?: Event) => {
    event?.preventDefault();
    return run.run(undefined);
  };
  return { ...run, submit };
}

/** A call on one of several things (this session, that passkey): `run(what)`, with the answer reported as by useSubmit. */
export function useAction<T, A = undefined>(action: (what: A) => Promise<T>, onDone?: (result: T, what: A) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [violations, setViolations] = useState<FieldViolation[]>([]);
  const run = async (what: A) => {
    setBusy(true);
    setError(undefined);
    setViolations([]);
    try {
      const result = await action(what);
      onDone?.(result, what);
    } catch (err) {
      setError(err);
      if (err instanceof ApiError) setViolations(err.violations);
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, violations };
}

export const lines = (text: string) =>
  text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
export const commaList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
