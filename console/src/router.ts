import { useEffect, useState } from 'preact/hooks';

// Paths under the console's base, kept in the address bar (history API), so
// every page has a link of its own and the back button works. A page of an
// org lives under /orgs/{orgId}/…: a bookmark opens the same page in the
// same org, whichever org the tab looked at last.

let base = '/ui/console';
const listeners = new Set<() => void>();
let navigated = false;
const ORG_PATH = /^\/orgs\/([A-Za-z0-9_-]{1,64})(\/.*)?$/;

/** Whether the user moved within the console since it loaded (not on the first page a browser opens). */
export const hasNavigated = () => navigated;

export function setBase(value: string): void {
  base = value;
}

/** The path below the base, e.g. /orgs/123/users/456. */
function belowBase(): string {
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : '/';
  return path || '/';
}

/** Where the address bar is: the org it names (if any) and the page's path within it. */
export interface Route {
  org?: string;
  path: string;
}

export function currentRoute(): Route {
  const path = belowBase();
  const match = ORG_PATH.exec(path);
  return match ? { org: match[1], path: match[2] || '/' } : { path };
}

/** The link to `path` in `org` (by default the org of the address bar). */
export function href(path: string, org = currentRoute().org): string {
  return org ? `${base}/orgs/${org}${path}` : `${base}${path}`;
}

export function navigate(path: string, replace = false, org?: string): void {
  const url = href(path, org);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  navigated = true;
  for (const listener of listeners) listener();
}

/** The address the browser opened, put right (an org added, the start page named): no move of the user's, so the focus stays where a new page has it. */
export function correctAddress(path: string, org?: string): void {
  history.replaceState(null, '', href(path, org));
  for (const listener of listeners) listener();
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    const back = () => {
      navigated = true;
      update();
    };
    listeners.add(update);
    addEventListener('popstate', back);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', back);
    };
  }, []);
  return route;
}

/** A click on an in-console link changes the page without reloading it; modified clicks open as usual. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element).closest('a');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  // A link within the page (the skip link) moves the focus as the browser does it.
  if (anchor.getAttribute('href')?.startsWith('#')) return;
  const url = new URL(anchor.href, location.href);
  if (url.origin !== location.origin || !url.pathname.startsWith(base) || anchor.hasAttribute('download')) return;
  event.preventDefault();
  history.pushState(null, '', url.pathname + url.search);
  navigated = true;
  for (const listener of listeners) listener();
}
