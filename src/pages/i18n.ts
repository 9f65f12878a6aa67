import { spaceSeparated } from '../domain/space-separated.ts';

// Message catalogues of the login pages. A page is shown in the first
// language of ui_locales we have, else the best of Accept-Language, else English.

const en = {
  signIn: 'Sign in',
  signInTo: 'Sign in to continue to {app}',
  loginName: 'Login name',
  loginNameHelp: 'Your login name, e.g. alice@acme.example.com',
  next: 'Next',
  password: 'Password',
  forgotten: 'Not you?',
  useOther: 'Use another account',
  wrongCredentials: 'The login name or password is wrong.',
  signInAs: 'Signed in as',
  chooseAccount: 'Choose an account',
  chooseAccountTo: 'to continue to {app}',
  register: 'Create account',
  registerTo: 'Create your account for {app}',
  registerLink: 'No account yet? Register',
  givenName: 'First name',
  familyName: 'Last name',
  email: 'Email',
  passwordNew: 'Password (at least {min} characters)',
  passwordRepeat: 'Repeat password',
  passwordTooShort: 'Use at least {min} characters.',
  passwordsDiffer: 'The passwords do not match.',
  accountExists: 'This login name is not available.',
  busy: 'The service is busy right now. Please try again in a moment.',
  registrationClosed: 'Registration is not open for this application. Ask its administrator for an account.',
  cancel: 'Cancel',
  sessionExpired: 'This sign-in has expired or was already finished. Go back to the application and start again.',
  formExpired: 'The form has expired. Please try again.',
  error: 'Something went wrong',
  fieldRequired: 'This field is required.',
  invalidEmail: 'Enter a valid email address.',
  tooManyAttempts: 'Too many failed sign-in attempts came from your network. Try again in {seconds} seconds.',
  accountLocked: 'This account is locked after too many failed sign-in attempts. Try again later, or ask your administrator to unlock it.',
  unavailableTitle: 'Temporarily unavailable',
  unavailable: 'Sign-in is temporarily unavailable. Please try again in a few seconds.',
  deviceTitle: 'Connect a device',
  deviceEnterCode: 'Enter the code shown on your device.',
  userCode: 'Code',
  userCodeHelp: 'For example BCDF-GHJK; upper or lower case, with or without the dash.',
  deviceWrongCode: 'This code is not valid, has expired or was already used. Check the code on your device and try again.',
  deviceAborted: 'The sign-in on the device was cancelled. You can close this window.',
  deviceConfirm: 'Confirm the device',
  deviceConfirmText: '{app} asks to sign you in on a device that shows this code:',
  deviceConfirmHelp: 'Continue only if you started the sign-in on that device and the code is the same.',
  continue: 'Continue',
  deviceDone: 'Device connected',
  deviceDoneText: 'You are signed in to {app} on your device. You can close this window.',
  otpTitle: 'Two-step verification',
  otpPrompt: 'Enter the 6-digit code from your authenticator app, or one of your recovery codes.',
  otpCode: 'Code',
  otpVerify: 'Verify',
  otpWrong: 'The code is wrong or was already used.',
  otpMalformed: 'Enter the 6 digits of the code (or a recovery code such as abcde-23456).',
  securityTitle: 'Security',
  securityLead: 'Sign in again to manage how you sign in.',
  securityFactors: 'Second factors',
  otpApp: 'Authenticator app',
  otpReady: 'Set up',
  otpNone: 'Not set up',
  otpSetUp: 'Set up an authenticator app',
  otpRemove: 'Remove the authenticator app',
  otpSetupLead: 'Scan the QR code with your authenticator app, or type the key below into it. Then enter the code the app shows.',
  otpSecret: 'Key',
  otpConfirm: 'Confirm',
  recoveryTitle: 'Your recovery codes',
  recoveryLead: 'Keep these codes somewhere safe. Each one signs you in once in place of a code from the app. They are shown only now.',
  done: 'Done',
  signOut: 'Sign out',
  otpRequired: 'This sign-in needs a second factor. Set one up to continue.',
  passkeySignIn: 'Sign in with a passkey',
  passkeyUse: 'Use a passkey',
  passkeys: 'Passkeys',
  passkeyNone: 'None yet',
  passkeyAdd: 'Add a passkey',
  passkeyName: 'Name of the new passkey',
  passkeyRemove: 'Remove',
  passkeyFailed: 'The passkey was not accepted. Try again.',
  passkeyMalformed: 'The browser sent no usable passkey response. Try again.',
  passkeyExpired: 'This passkey request has expired or was already used. Try again.',
  or: 'or',
  noFactorAllowed: 'This sign-in needs a second factor, but none is allowed for your organization. Ask your administrator.',
  passkeyNotAllowed: 'Signing in with a passkey alone is not allowed here. Sign in with your login name and password.',
  logoutTitle: 'Sign out?',
  logoutQuestion: 'Do you want to sign out of Portcullis? You will be signed out of the applications you used with it in this browser.',
  logoutIgnore: 'If you did not ask to sign out, close this page: you stay signed in.',
  loggingOut: 'Signing out…',
  loggedOutTitle: 'You are signed out',
  loggedOut: 'You can close this window.',
  samlRefused: 'This sign-in request was refused: {reason}. Go back to the application and start again, or ask its administrator.',
  samlSending: 'Returning you to {app}…',
} as const;

export type Messages = Record<keyof typeof en, string>;

const de: Messages = {
  signIn: 'Anmelden',
  signInTo: 'Melden Sie sich an, um mit {app} fortzufahren',
  loginName: 'Loginname',
  loginNameHelp: 'Ihr Loginname, z. B. alice@acme.example.com',
  next: 'Weiter',
  password: 'Passwort',
  forgotten: 'Nicht Sie?',
  useOther: 'Anderes Konto verwenden',
  wrongCredentials: 'Loginname oder Passwort ist falsch.',
  signInAs: 'Angemeldet als',
  chooseAccount: 'Konto auswählen',
  chooseAccountTo: 'um mit {app} fortzufahren',
  register: 'Konto erstellen',
  registerTo: 'Erstellen Sie Ihr Konto für {app}',
  registerLink: 'Noch kein Konto? Registrieren',
  givenName: 'Vorname',
  familyName: 'Nachname',
  email: 'E-Mail',
  passwordNew: 'Passwort (mindestens {min} Zeichen)',
  passwordRepeat: 'Passwort wiederholen',
  passwordTooShort: 'Verwenden Sie mindestens {min} Zeichen.',
  passwordsDiffer: 'Die Passwörter stimmen nicht überein.',
  accountExists: 'Dieser Loginname ist nicht verfügbar.',
  busy: 'Der Dienst ist gerade ausgelastet. Bitte versuchen Sie es gleich noch einmal.',
  registrationClosed: 'Für diese Anwendung ist keine Registrierung möglich. Bitten Sie deren Administration um ein Konto.',
  cancel: 'Abbrechen',
  sessionExpired: 'Diese Anmeldung ist abgelaufen oder wurde bereits abgeschlossen. Kehren Sie zur Anwendung zurück und beginnen Sie erneut.',
  formExpired: 'Das Formular ist abgelaufen. Bitte versuchen Sie es erneut.',
  error: 'Etwas ist schiefgelaufen',
  fieldRequired: 'Dieses Feld ist erforderlich.',
  invalidEmail: 'Geben Sie eine gültige E-Mail-Adresse ein.',
  tooManyAttempts: 'Von Ihrem Netzwerk kamen zu viele fehlgeschlagene Anmeldeversuche. Versuchen Sie es in {seconds} Sekunden erneut.',
  accountLocked:
    'Dieses Konto ist nach zu vielen fehlgeschlagenen Anmeldeversuchen gesperrt. Versuchen Sie es später erneut oder bitten Sie Ihre Administration, es zu entsperren.',
  unavailableTitle: 'Vorübergehend nicht verfügbar',
  unavailable: 'Die Anmeldung ist vorübergehend nicht verfügbar. Bitte versuchen Sie es in einigen Sekunden erneut.',
  deviceTitle: 'Gerät verbinden',
  deviceEnterCode: 'Geben Sie den Code ein, den Ihr Gerät anzeigt.',
  userCode: 'Code',
  userCodeHelp: 'Zum Beispiel BCDF-GHJK; groß oder klein, mit oder ohne Bindestrich.',
  deviceWrongCode: 'Dieser Code ist ungültig, abgelaufen oder wurde schon verwendet. Prüfen Sie den Code auf Ihrem Gerät und versuchen Sie es erneut.',
  deviceAborted: 'Die Anmeldung auf dem Gerät wurde abgebrochen. Sie können dieses Fenster schließen.',
  deviceConfirm: 'Gerät bestätigen',
  deviceConfirmText: '{app} möchte Sie auf einem Gerät anmelden, das diesen Code zeigt:',
  deviceConfirmHelp: 'Fahren Sie nur fort, wenn Sie die Anmeldung auf diesem Gerät begonnen haben und der Code derselbe ist.',
  continue: 'Weiter',
  deviceDone: 'Gerät verbunden',
  deviceDoneText: 'Sie sind auf Ihrem Gerät bei {app} angemeldet. Sie können dieses Fenster schließen.',
  otpTitle: 'Bestätigung in zwei Schritten',
  otpPrompt: 'Geben Sie den 6-stelligen Code aus Ihrer Authenticator-App oder einen Ihrer Wiederherstellungscodes ein.',
  otpCode: 'Code',
  otpVerify: 'Bestätigen',
  otpWrong: 'Der Code ist falsch oder wurde bereits verwendet.',
  otpMalformed: 'Geben Sie die 6 Ziffern des Codes ein (oder einen Wiederherstellungscode wie abcde-23456).',
  securityTitle: 'Sicherheit',
  securityLead: 'Melden Sie sich erneut an, um Ihre Anmeldemethoden zu verwalten.',
  securityFactors: 'Zweite Faktoren',
  otpApp: 'Authenticator-App',
  otpReady: 'Eingerichtet',
  otpNone: 'Nicht eingerichtet',
  otpSetUp: 'Authenticator-App einrichten',
  otpRemove: 'Authenticator-App entfernen',
  otpSetupLead:
    'Scannen Sie den QR-Code mit Ihrer Authenticator-App oder geben Sie den Schlüssel unten dort ein. Geben Sie dann den Code ein, den die App anzeigt.',
  otpSecret: 'Schlüssel',
  otpConfirm: 'Bestätigen',
  recoveryTitle: 'Ihre Wiederherstellungscodes',
  recoveryLead: 'Bewahren Sie diese Codes sicher auf. Jeder meldet Sie einmal anstelle eines Codes aus der App an. Sie werden nur jetzt angezeigt.',
  done: 'Fertig',
  signOut: 'Abmelden',
  otpRequired: 'Diese Anmeldung erfordert einen zweiten Faktor. Richten Sie einen ein, um fortzufahren.',
  passkeySignIn: 'Mit einem Passkey anmelden',
  passkeyUse: 'Passkey verwenden',
  passkeys: 'Passkeys',
  passkeyNone: 'Noch keine',
  passkeyAdd: 'Passkey hinzufügen',
  passkeyName: 'Name des neuen Passkeys',
  passkeyRemove: 'Entfernen',
  passkeyFailed: 'Der Passkey wurde nicht akzeptiert. Versuchen Sie es erneut.',
  passkeyMalformed: 'Der Browser hat keine verwendbare Passkey-Antwort gesendet. Versuchen Sie es erneut.',
  passkeyExpired: 'Diese Passkey-Anfrage ist abgelaufen oder wurde bereits verwendet. Versuchen Sie es erneut.',
  or: 'oder',
  noFactorAllowed: 'Diese Anmeldung erfordert einen zweiten Faktor, für Ihre Organisation ist aber keiner erlaubt. Wenden Sie sich an Ihre Administration.',
  passkeyNotAllowed: 'Die Anmeldung nur mit einem Passkey ist hier nicht erlaubt. Melden Sie sich mit Loginname und Passwort an.',
  logoutTitle: 'Abmelden?',
  logoutQuestion: 'Möchten Sie sich von Portcullis abmelden? Sie werden von den Anwendungen abgemeldet, die Sie in diesem Browser damit verwendet haben.',
  logoutIgnore: 'Wenn Sie sich nicht abmelden wollten, schließen Sie diese Seite: Sie bleiben angemeldet.',
  loggingOut: 'Abmeldung läuft…',
  loggedOutTitle: 'Sie sind abgemeldet',
  loggedOut: 'Sie können dieses Fenster schließen.',
  samlRefused:
    'Diese Anmeldeanfrage wurde abgelehnt: {reason}. Kehren Sie zur Anwendung zurück und beginnen Sie erneut, oder wenden Sie sich an ihre Administration.',
  samlSending: 'Sie werden zu {app} zurückgeleitet…',
};

export const CATALOGUES: Record<string, Messages> = { en, de };
export const LANGUAGES = Object.keys(CATALOGUES);

function primary(tag: string): string {
  return tag.trim().toLowerCase().split('-')[0] ?? '';
}

/** ui_locales (space-delimited, in order) first, then Accept-Language by weight. */
export function chooseLanguage(uiLocales: unknown, acceptLanguage: string | undefined): string {
  if (typeof uiLocales === 'string') {
    const match = spaceSeparated(uiLocales)
      .map(primary)
      .find((tag) => LANGUAGES.includes(tag));
    if (match) return match;
  }
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part) => {
      const [tag = '', ...params] = part.split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { tag: primary(tag), q: q ? Number(q.slice(2)) || 0 : 1 };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q);
  return ranked.find((entry) => LANGUAGES.includes(entry.tag))?.tag ?? 'en';
}

export function translate(messages: Messages, key: keyof Messages, values: Record<string, string | number> = {}): string {
  return messages[key].replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ''));
}
