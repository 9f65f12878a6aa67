import type { MessageType } from '../storage/outbox.ts';

// The default texts of the mails, per language. `{{.Name}}` is a
// placeholder (docs/operations.md, "Mail"); the renderer escapes its value in
// the HTML part.

export interface MailText {
  subject: string;
  greeting: string;
  /** The body of the mail, and the whole of an SMS. */
  text: string;
  /** Shown as a button when the message has a `{{.URL}}`. */
  buttonText?: string;
}

export const MAIL_LANGUAGES = ['en', 'de'] as const;
export type MailLanguage = (typeof MAIL_LANGUAGES)[number];

export const MAIL_TEXTS: Record<MailLanguage, Record<MessageType, MailText>> = {
  en: {
    InitCode: {
      subject: 'Set your password for {{.OrgName}}',
      greeting: 'Hello {{.FirstName}},',
      text: 'An account {{.UserName}} was created for you. Set its password with this code: {{.Code}}',
      buttonText: 'Set password',
    },
    VerifyEmail: {
      subject: 'Verify your email address',
      greeting: 'Hello {{.FirstName}},',
      text: 'Please confirm that this address belongs to {{.UserName}}. Your code: {{.Code}}',
      buttonText: 'Verify email',
    },
    PasswordReset: {
      subject: 'Reset your password',
      greeting: 'Hello {{.FirstName}},',
      text: 'Someone asked to reset the password of {{.UserName}}. If it was you, use this code: {{.Code}}. If not, ignore this message.',
      buttonText: 'Reset password',
    },
    PasswordChanged: {
      subject: 'Your password was changed',
      greeting: 'Hello {{.FirstName}},',
      text: 'The password of {{.UserName}} at {{.OrgName}} was changed. If you did not do this, contact your administrator at once.',
    },
    OtpEmail: {
      subject: 'Your sign-in code',
      greeting: 'Hello {{.FirstName}},',
      text: 'Your one-time sign-in code: {{.Code}}. It expires in 5 minutes.',
    },
    VerifyPhone: {
      subject: 'Verify your phone number',
      greeting: 'Hello {{.FirstName}},',
      text: '{{.OrgName}}: your code to verify this phone number is {{.Code}}',
    },
    OtpSms: {
      subject: 'Your sign-in code',
      greeting: 'Hello {{.FirstName}},',
      text: '{{.OrgName}}: your sign-in code is {{.Code}}. It expires in 5 minutes.',
    },
  },
  de: {
    InitCode: {
      subject: 'Passwort für {{.OrgName}} festlegen',
      greeting: 'Hallo {{.FirstName}},',
      text: 'Für Sie wurde das Konto {{.UserName}} angelegt. Legen Sie sein Passwort mit diesem Code fest: {{.Code}}',
      buttonText: 'Passwort festlegen',
    },
    VerifyEmail: {
      subject: 'Bestätigen Sie Ihre E-Mail-Adresse',
      greeting: 'Hallo {{.FirstName}},',
      text: 'Bitte bestätigen Sie, dass diese Adresse zu {{.UserName}} gehört. Ihr Code: {{.Code}}',
      buttonText: 'E-Mail bestätigen',
    },
    PasswordReset: {
      subject: 'Passwort zurücksetzen',
      greeting: 'Hallo {{.FirstName}},',
      text: 'Jemand möchte das Passwort von {{.UserName}} zurücksetzen. Wenn Sie das waren, verwenden Sie diesen Code: {{.Code}}. Wenn nicht, ignorieren Sie diese Nachricht.',
      buttonText: 'Passwort zurücksetzen',
    },
    PasswordChanged: {
      subject: 'Ihr Passwort wurde geändert',
      greeting: 'Hallo {{.FirstName}},',
      text: 'Das Passwort von {{.UserName}} bei {{.OrgName}} wurde geändert. Wenn Sie das nicht waren, wenden Sie sich sofort an Ihren Administrator.',
    },
    OtpEmail: {
      subject: 'Ihr Anmeldecode',
      greeting: 'Hallo {{.FirstName}},',
      text: 'Ihr einmaliger Anmeldecode: {{.Code}}. Er ist 5 Minuten gültig.',
    },
    VerifyPhone: {
      subject: 'Bestätigen Sie Ihre Telefonnummer',
      greeting: 'Hallo {{.FirstName}},',
      text: '{{.OrgName}}: Ihr Code zur Bestätigung dieser Telefonnummer lautet {{.Code}}',
    },
    OtpSms: {
      subject: 'Ihr Anmeldecode',
      greeting: 'Hallo {{.FirstName}},',
      text: '{{.OrgName}}: Ihr Anmeldecode lautet {{.Code}}. Er ist 5 Minuten gültig.',
    },
  },
};
