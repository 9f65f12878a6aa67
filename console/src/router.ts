import { useEffect, useState } from 'preact/hooks';

// Paths under the console's base, kept in the address bar (history API), so
// every page has a link of its own and the back button works.

let base = '/ui/console';
const listeners = new Set<() => void>();
let navigated = false;

/** Whether the user moved within the console since it loaded (not on the first page a browser opens). */
export const hasNavigated = () => navigated;

export function setBase(value: string): void {
  base = value;
}

export const href = (path: string) => `${base}${path}`;

export function navigate(path: string, replace = false): void {
  const url = href(path);
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  navigated = true;
  for (const listener of listeners) listener();
}

/** The path below the base, e.g. /users/123. */
export function currentPath(): string {
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) : '/';
  return path || '/';
}

export function useRoute(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const update = () => {
      navigated = true;
      setPath(currentPath());
    };
    listeners.add(update);
    addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      removeEventListener('popstate', update);
    };
  }, []);
  return path;
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
  navigate(url.pathname.slice(base.length) + url.search);
}
