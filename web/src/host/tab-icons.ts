/**
 * Page icons of the tab list. A tab names its icon by a short hash; the bytes come once per
 * hash from `browser-control-v1/tab_icon`, as a `data:` image address, and are kept for the
 * page's life (icons are small, and many tabs share one). Nothing but a `data:image/` address
 * is ever shown, so an icon can neither load from the network nor run as a document.
 */

import { useEffect, useState } from 'preact/hooks';
import type { HostConnection } from './connection';

const known = new Map<string, string | null>();
const loading = new Map<string, Promise<string | null>>();

/** Whether `address` is one the tab list may show as an icon. */
export function isIconAddress(address: unknown): address is string {
  return typeof address === 'string' && address.startsWith('data:image/') && address.length <= 64 * 1024;
}

async function load(connection: HostConnection, tabId: string, hash: string): Promise<string | null> {
  try {
    const answer = await connection.call('browser-control-v1/tab_icon', { tabId });
    // The tab may have a newer icon by now: keep what came under its own hash.
    const address = isIconAddress(answer.dataUrl) ? answer.dataUrl : null;
    if (answer.icon) known.set(answer.icon, address);
    return answer.icon === hash ? address : null;
  } catch {
    return null;
  } finally {
    loading.delete(hash);
  }
}

/** The icon of `tabId` whose hash is `hash`, once it has come (null while none). */
export function useTabIcon(connection: HostConnection, tabId: string, hash: string | null): string | null {
  const [address, setAddress] = useState<string | null>(hash ? known.get(hash) ?? null : null);
  useEffect(() => {
    if (!hash) {
      setAddress(null);
      return undefined;
    }
    if (known.has(hash)) {
      setAddress(known.get(hash) ?? null);
      return undefined;
    }
    let live = true;
    let pending = loading.get(hash);
    if (!pending) {
      pending = load(connection, tabId, hash);
      loading.set(hash, pending);
    }
    void pending.then((loaded) => live && setAddress(loaded));
    return () => {
      live = false;
    };
  }, [connection, tabId, hash]);
  return address;
}
