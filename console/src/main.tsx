import { render } from 'preact';
import { App } from './app.tsx';
import { completeSignIn, currentSession, startSignIn } from './auth.ts';
import { readConfig } from './config.ts';
import { language, t } from './i18n.ts';
import { onLinkClick, setBase } from './router.ts';
import './style.css';

// Start: finish a sign-in coming back from the login, or start one, then
// show the console.

const config = readConfig(document.body);
setBase(config.base);
document.documentElement.lang = language;
// In-console links change the page without reloading it (keyboard activation of a link is a click too).
document.addEventListener('click', onLinkClick);
const root = document.getElementById('console')!;

function show(): void {
  const session = currentSession();
  if (!session) {
    render(<p role="status">{t('signingIn')}</p>, root);
    void startSignIn(config, location.pathname + location.search);
    return;
  }
  render(<App config={config} session={session} />, root);
}

function failed(reason: string): void {
  render(
    <main id="main">
      <h1>{t('appName')}</h1>
      <p role="alert">{t('signInFailed', { reason })}</p>
      <button type="button" onClick={() => void startSignIn(config, `${config.base}/`)}>
        {t('tryAgain')}
      </button>
    </main>,
    root,
  );
}

if (location.pathname === `${config.base}/callback`) {
  render(<p role="status">{t('signingIn')}</p>, root);
  completeSignIn(config, new URLSearchParams(location.search)).then(
    (next) => {
      history.replaceState(null, '', next);
      show();
    },
    (err: Error) => failed(err.message),
  );
} else {
  show();
}
