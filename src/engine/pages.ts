// The few HTML pages the engine renders itself: its error page (shown when
// the redirect_uri cannot be trusted, so the error must not be redirected)
// and the logout steps. The login pages live in interactions/.

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Portcullis</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; display: grid; place-items: center; min-height: 100vh; }
  main { background: #fff; border-radius: 12px; box-shadow: 0 2px 12px rgba(0,0,0,.08); padding: 2rem 2.5rem; max-width: 28rem; width: calc(100% - 2rem); box-sizing: border-box; }
  h1 { font-size: 1.35rem; margin: 0 0 1rem; }
  code { background: #f0f1f4; padding: .1rem .35rem; border-radius: 4px; }
  button { font: inherit; padding: .6rem 1.2rem; border-radius: 8px; border: 0; background: #2f5bea; color: #fff; cursor: pointer; }
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

export function errorPage(error: string, description?: string): string {
  return page('Sign-in error', `<h1>Something went wrong</h1>
<p><code>${escapeHtml(error)}</code></p>
${description ? `<p>${escapeHtml(description)}</p>` : ''}
<p>Go back to the application and try again.</p>`);
}

/** Logout needs no confirmation (SEED 4.6): the engine's confirm form submits itself. */
export function logoutPage(form: string): string {
  return page('Signing out', `<h1>Signing out…</h1>
${form.replace('</form>', '<input type="hidden" name="logout" value="yes"><noscript><button type="submit">Sign out</button></noscript></form>')}
<script>document.forms[0].submit()</script>`);
}

export function loggedOutPage(): string {
  return page('Signed out', '<h1>You are signed out</h1><p>You can close this window.</p>');
}
