// The texts of the self-service pages (invitation, email verification,
// password reset; docs/self-service.md), en and de, beside the login's own
// catalogue (i18n.ts), whose shared words (password, continue) they reuse.

const en = {
  forgotPassword: 'Forgot password?',
  resetTitle: 'Reset your password',
  resetSentLead: 'If an account with this login name exists, we sent a code to its email address. Enter it and choose a new password.',
  resetLinkLead: 'Enter the code from the mail and choose a new password.',
  initTitle: 'Set your password',
  initLead: 'Enter the code from your invitation and choose a password.',
  verifyTitle: 'Verify your email address',
  verifyLead: 'Enter the code from the mail we sent to your email address.',
  verifySentTo: 'We sent a code to {email}. Enter it to continue.',
  code: 'Code',
  newPassword: 'New password',
  repeatPassword: 'Repeat the new password',
  save: 'Save',
  verify: 'Verify',
  sendAgain: 'Send a new code',
  codeSentAgain: 'A new code is on its way.',
  codeMalformed: 'This is not a code we send. Check it and try again.',
  codeWrong: 'This code is not valid.',
  codeExpired: 'This code has expired. Ask for a new one.',
  codeUsed: 'This code has already been used.',
  passwordRejected: 'This password is not allowed. {reason}',
  initDone: 'Your password is set, and your email address is verified. You can now sign in.',
  resetDone: 'Your password has been changed. Sign in with your new password.',
  verifyDone: 'Your email address is verified.',
  continueSignIn: 'Continue to sign in',
};

export type SelfServiceMessages = Record<keyof typeof en, string>;

const de: SelfServiceMessages = {
  forgotPassword: 'Passwort vergessen?',
  resetTitle: 'Passwort zurücksetzen',
  resetSentLead:
    'Wenn ein Konto mit diesem Anmeldenamen existiert, haben wir einen Code an seine E-Mail-Adresse gesendet. Geben Sie ihn ein und wählen Sie ein neues Passwort.',
  resetLinkLead: 'Geben Sie den Code aus der E-Mail ein und wählen Sie ein neues Passwort.',
  initTitle: 'Passwort festlegen',
  initLead: 'Geben Sie den Code aus Ihrer Einladung ein und wählen Sie ein Passwort.',
  verifyTitle: 'E-Mail-Adresse bestätigen',
  verifyLead: 'Geben Sie den Code aus der E-Mail ein, die wir an Ihre Adresse gesendet haben.',
  verifySentTo: 'Wir haben einen Code an {email} gesendet. Geben Sie ihn ein, um fortzufahren.',
  code: 'Code',
  newPassword: 'Neues Passwort',
  repeatPassword: 'Neues Passwort wiederholen',
  save: 'Speichern',
  verify: 'Bestätigen',
  sendAgain: 'Neuen Code senden',
  codeSentAgain: 'Ein neuer Code ist unterwegs.',
  codeMalformed: 'Das ist kein Code von uns. Prüfen Sie ihn und versuchen Sie es erneut.',
  codeWrong: 'Dieser Code ist nicht gültig.',
  codeExpired: 'Dieser Code ist abgelaufen. Fordern Sie einen neuen an.',
  codeUsed: 'Dieser Code wurde bereits verwendet.',
  passwordRejected: 'Dieses Passwort ist nicht erlaubt. {reason}',
  initDone: 'Ihr Passwort ist festgelegt und Ihre E-Mail-Adresse bestätigt. Sie können sich jetzt anmelden.',
  resetDone: 'Ihr Passwort wurde geändert. Melden Sie sich mit dem neuen Passwort an.',
  verifyDone: 'Ihre E-Mail-Adresse ist bestätigt.',
  continueSignIn: 'Weiter zur Anmeldung',
};

const CATALOGUES: Record<string, SelfServiceMessages> = { en, de };

/** The self-service texts in `lang` (a language of the login's catalogue), English otherwise. */
export function selfServiceTexts(lang: string): SelfServiceMessages {
  return CATALOGUES[lang] ?? en;
}
