import { escapeHtml as e, page } from '../../src/pages/layout.ts';
import { translate } from '../../src/pages/i18n.ts';
import { errorBox, hidden, type PageContext } from './parts.ts';

export interface RegistrationValues {
  givenName?: string;
  familyName?: string;
  email?: string;
  errors?: Partial<Record<'givenName' | 'familyName' | 'email' | 'password' | 'passwordRepeat', string>>;
  error?: string;
}

function field(
  name: keyof NonNullable<RegistrationValues['errors']>,
  label: string,
  type: string,
  value: string,
  error: string | undefined,
  extra: string,
): string {
  const describedBy = error ? ` aria-invalid="true" aria-describedby="${name}Error"` : '';
  return `<label for="${name}">${e(label)}</label>
  <input type="${type}" id="${name}" name="${name}" value="${e(value)}" ${extra}${describedBy}>
  ${error ? `<p class="field-error" id="${name}Error">${e(error)}</p>` : ''}`;
}

export function registrationPage(c: PageContext, values: RegistrationValues, minPasswordLength: number): string {
  const err = values.errors ?? {};
  return page(
    c.t.register,
    `
<h1>${e(c.t.register)}</h1>
<p class="lead">${e(translate(c.t, 'registerTo', { app: c.appName }))}</p>
${errorBox(values.error)}
<form method="post" action="${e(c.action)}/register" novalidate>
  ${hidden('csrf', c.csrf)}
  <div class="row">
    <div>${field('givenName', c.t.givenName, 'text', values.givenName ?? '', err.givenName, 'autocomplete="given-name" required autofocus maxlength="200"')}</div>
    <div>${field('familyName', c.t.familyName, 'text', values.familyName ?? '', err.familyName, 'autocomplete="family-name" required maxlength="200"')}</div>
  </div>
  ${field('email', c.t.email, 'email', values.email ?? '', err.email, 'autocomplete="email" required maxlength="200"')}
  ${field('password', translate(c.t, 'passwordNew', { min: minPasswordLength }), 'password', '', err.password, `autocomplete="new-password" required minlength="${minPasswordLength}" maxlength="1024"`)}
  ${field('passwordRepeat', c.t.passwordRepeat, 'password', '', err.passwordRepeat, 'autocomplete="new-password" required maxlength="1024"')}
  <div class="actions">
    <span></span>
    <button type="submit">${e(c.t.register)}</button>
  </div>
</form>`,
    c.lang,
  );
}
