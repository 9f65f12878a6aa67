import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

// The layout, headers, escaping and served files every page of the service
// shares: the login steps (interactions/), the engine's own pages
// (engine-pages.ts, device.ts) and the console's shell.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * The files the pages load: their style sheet and the one script (a form
 * that submits itself). Served from our origin, so the policy below allows
 * no inline script or style at all; the content hash in each path lets
 * browsers cache them for good.
 */
const STYLES = `:root { --accent: #2f5bea; --accent-dark: #2446b8; --text: #1d2330; --muted: #5b6478; --line: #d9dde6; --error: #b42318; --field: #fff; --focus: #2f5bea; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f4f5f7; color: var(--text); margin: 0; min-height: 100vh; display: grid; place-items: center; }
main { background: #fff; border-radius: 14px; box-shadow: 0 4px 24px rgba(20, 30, 60, .08); padding: 2.25rem 2.5rem; width: min(26rem, calc(100% - 2rem)); margin: 2rem 0; }
.brand { font-weight: 700; letter-spacing: .02em; color: var(--accent); margin: 0 0 1.25rem; font-size: .95rem; }
h1 { font-size: 1.45rem; margin: 0 0 .35rem; }
.lead { color: var(--muted); margin: 0 0 1.5rem; }
label { display: block; font-weight: 600; font-size: .9rem; margin: 1rem 0 .35rem; }
input[type=text], input[type=email], input[type=password] { width: 100%; font: inherit; padding: .65rem .75rem; border: 1px solid var(--line); border-radius: 8px; }
input:focus, button:focus, a:focus { outline: 3px solid rgba(47, 91, 234, .35); outline-offset: 1px; }
.help { color: var(--muted); font-size: .82rem; margin: .3rem 0 0; }
.error { color: var(--error); background: #fef3f2; border: 1px solid #fecdca; border-radius: 8px; padding: .6rem .8rem; margin: 0 0 1rem; }
.notice { color: #05603a; background: #ecfdf3; border: 1px solid #abefc6; border-radius: 8px; padding: .6rem .8rem; margin: 0 0 1rem; }
.field-error { color: var(--error); font-size: .85rem; margin: .3rem 0 0; }
button, .button { display: inline-block; font: inherit; font-weight: 600; padding: .7rem 1.2rem; border-radius: 8px; border: 0; background: var(--accent); color: #fff; cursor: pointer; text-decoration: none; }
button:hover, .button:hover { background: var(--accent-dark); }
.actions { display: flex; justify-content: space-between; align-items: center; margin-top: 1.5rem; gap: 1rem; flex-wrap: wrap; }
/* The link beside the main button gives way (its words wrap) before the button does: a longer language ("Noch kein Konto? Registrieren") keeps "Weiter" on its line. */
.actions > a.secondary { flex: 1 1 0; min-width: 8rem; }
.actions > button { flex: none; white-space: nowrap; margin-left: auto; }
.secondary { background: none; color: var(--accent); padding: .7rem 0; }
.secondary:hover { background: none; text-decoration: underline; }
.identity { display: flex; align-items: center; gap: .6rem; border: 1px solid var(--line); border-radius: 999px; padding: .35rem .85rem .35rem .35rem; width: fit-content; max-width: 100%; margin: .75rem 0 .5rem; }
/* Login names may be long and unbroken (a.very.long.name@sub.domain): wrap them anywhere rather than overflow the card. */
.identity > span:last-child, .who { min-width: 0; overflow-wrap: anywhere; }
.avatar { flex: none; width: 2rem; height: 2rem; border-radius: 50%; background: #e6ebfd; color: var(--accent); display: grid; place-items: center; font-weight: 700; }
ul.accounts { list-style: none; padding: 0; margin: 0; border: 1px solid var(--line); border-radius: 10px; }
ul.accounts li + li { border-top: 1px solid var(--line); }
ul.accounts button { width: 100%; display: flex; align-items: center; gap: .8rem; background: none; color: var(--text); text-align: left; border-radius: 0; padding: .8rem 1rem; font-weight: 400; }
ul.accounts button:hover { background: #f6f8fe; }
.who strong { display: block; }
.who span { color: var(--muted); font-size: .88rem; }
code { background: #f0f1f4; padding: .1rem .35rem; border-radius: 4px; }
.row { display: grid; grid-template-columns: 1fr 1fr; gap: 0 .8rem; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
dl.factors { display: grid; grid-template-columns: 1fr auto; gap: .3rem 1rem; margin: 0 0 1rem; }
dl.factors dd { margin: 0; color: var(--muted); }
.qr { width: 12rem; max-width: 100%; margin: 0 auto 1rem; }
.qr svg { display: block; width: 100%; height: auto; }
ul.codes { columns: 2; list-style: none; padding: 0; font-family: ui-monospace, monospace; }
ul.codes li { margin: .25rem 0; }
p.or { text-align: center; color: var(--muted); margin: 1.25rem 0 .5rem; }
form.passkey button { width: 100%; }
.secondary-button { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
.secondary-button:hover { background: #f6f8fe; }
ul.passkeys { list-style: none; padding: 0; margin: 0 0 1rem; }
ul.passkeys li { display: flex; justify-content: space-between; align-items: center; gap: 1rem; overflow-wrap: anywhere; }
/* External providers' buttons (interactions/views/idp-brands.ts). */
.idps { display: grid; gap: .6rem; }
.idps form { margin: 0; }
button.idp { width: 100%; display: flex; align-items: center; justify-content: center; gap: .75rem; min-height: 2.75rem; padding: .6rem 1rem; border: 1px solid var(--line); background: #fff; color: var(--text); font-weight: 500; overflow-wrap: anywhere; }
button.idp:hover { background: #f6f7f9; }
button.idp:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.idp-mark { flex: none; }
button.idp-google { border-color: #747775; color: #1F1F1F; font-family: Roboto, system-ui, sans-serif; }
button.idp-github { background: #24292F; border-color: #24292F; color: #fff; }
button.idp-github:hover { background: #32383F; }
button.idp-gitlab { border-color: #FC6D26; color: #171321; }
button.idp-microsoft { border-color: #8C8C8C; color: #5E5E5E; font-family: "Segoe UI", system-ui, sans-serif; font-weight: 600; }
@media (prefers-color-scheme: dark) {
  button.idp { background: var(--field); }
  button.idp:hover, button.idp-google:hover, button.idp-microsoft:hover { background: #242a38; }
  button.idp-google { background: #131314; border-color: #8E918F; color: #E3E3E3; }
  button.idp-github { background: #F6F8FA; border-color: #F6F8FA; color: #24292F; }
  button.idp-github:hover { background: #fff; }
  button.idp-gitlab { color: var(--text); }
  button.idp-microsoft { background: #2F2F2F; border-color: #2F2F2F; color: #fff; }
}
/* The system's dark mode: the same page in dark colours, every text at WCAG AA contrast. */
@media (prefers-color-scheme: dark) {
  :root { color-scheme: dark; --accent: #9db4ff; --accent-dark: #c2d0ff; --text: #e6e8ee; --muted: #aab1c0; --line: #434a5a; --error: #ffb4ab; --field: #151820; --focus: #9db4ff; }
  body { background: #0e1015; }
  main { background: #1b1e26; box-shadow: none; }
  button, .button { color: #10141f; }
  input[type=text], input[type=email], input[type=password] { background: var(--field); color: var(--text); }
  .secondary, .secondary:hover { color: var(--accent); }
  .secondary-button { background: transparent; }
  .secondary-button:hover, ul.accounts button:hover { background: #242a38; }
  .error { background: #3b1614; border-color: #7a2a24; }
  .notice { color: #a6f4c5; background: #0b2a1c; border-color: #1d5c3c; }
  code { background: #2a2f3a; }
  .avatar { background: #2a3352; }
}
@media (max-width: 420px) { main { padding: 1.5rem 1.25rem; } .row { grid-template-columns: 1fr; } }
`;

const AUTO_SUBMIT = "document.addEventListener('DOMContentLoaded', function () { document.forms[0].submit(); });\n";

// The browser half of @simplewebauthn: its own UMD build (global
// SimpleWebAuthnBrowser), served from our origin like every page script.
// The package exports only its module entry points; the bundle sits beside them.
const WEBAUTHN_LIBRARY = readFileSync(
  join(dirname(createRequire(import.meta.url).resolve('@simplewebauthn/browser')), '../dist/bundle/index.umd.min.js'),
  'utf8',
);

// A passkey form (data-passkey="register" or "authenticate", options in
// data-options) is hidden until this script shows it, as nothing works
// without it; its button runs the ceremony and posts the authenticator's
// response, or the name of the browser's error, to the server.
const PASSKEY_FORMS = `document.addEventListener('DOMContentLoaded', function () {
  document.querySelectorAll('form[data-passkey]').forEach(function (form) {
    if (!window.PublicKeyCredential) return;
    form.hidden = false;
    form.querySelector('button[data-start]').addEventListener('click', function () {
      if (form.reportValidity && !form.reportValidity()) return;
      var options = JSON.parse(form.getAttribute('data-options'));
      var ceremony = form.getAttribute('data-passkey') === 'register' ? SimpleWebAuthnBrowser.startRegistration : SimpleWebAuthnBrowser.startAuthentication;
      ceremony({ optionsJSON: options }).then(function (response) {
        form.elements.response.value = JSON.stringify(response);
      }, function (error) {
        form.elements.response.value = 'error:' + ((error && error.name) || 'Error');
      }).then(function () { form.submit(); });
    });
  });
});
`;

export interface PageAsset {
  path: string;
  type: string;
  body: string;
}

function asset(name: string, extension: string, type: string, body: string): PageAsset {
  return { path: `/ui/assets/${name}.${createHash('sha256').update(body).digest('hex').slice(0, 12)}.${extension}`, type, body };
}

export const PAGE_ASSETS = {
  styles: asset('pages', 'css', 'text/css; charset=utf-8', STYLES),
  autoSubmit: asset('auto-submit', 'js', 'text/javascript; charset=utf-8', AUTO_SUBMIT),
  webauthn: asset('simplewebauthn-browser', 'js', 'text/javascript; charset=utf-8', WEBAUTHN_LIBRARY),
  passkeyForms: asset('passkey-forms', 'js', 'text/javascript; charset=utf-8', PASSKEY_FORMS),
};

/**
 * Headers of every page the service renders: no caching, no framing, no
 * sniffing, no referrer, and scripts and styles only from our own files.
 */
export const PAGE_HEADERS: Record<string, string> = {
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  // No form-action: a login form's redirect chain ends at the app's
  // redirect_uri, on another origin, and browsers apply form-action to it.
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
};

/** The one page layout of everything the service renders itself. */
export function page(title: string, body: string, lang = 'en'): string {
  return `<!doctype html>
<html lang="${escapeHtml(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Portcullis</title>
<link rel="stylesheet" href="${PAGE_ASSETS.styles.path}">
</head>
<body><main><p class="brand">Portcullis</p>${body}</main></body>
</html>`;
}
