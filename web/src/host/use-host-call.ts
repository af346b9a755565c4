/** Load a Team API route's answer, again whenever one of the named events arrives. */

import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { HostConnection } from './connection';
import type { RouteArgs, RouteName, RouteResult } from './protocol';

export interface HostLoad<T> {
  data: T | null;
  error: unknown;
  reload(): void;
}

export function useHostLoad<N extends RouteName>(
  connection: HostConnection | null,
  route: N,
  args: RouteArgs<N>,
  events: readonly string[],
): HostLoad<RouteResult<N>> {
  const [data, setData] = useState<RouteResult<N> | null>(null);
  const [error, setError] = useState<unknown>(null);
  const generation = useRef(0);
  const argsKey = JSON.stringify(args);

  const reload = useCallback(() => {
    if (!connection) return;
    const mine = ++generation.current;
    connection.call(route, JSON.parse(argsKey) as RouteArgs<N>).then(
      (value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(null);
      },
      (failure: unknown) => {
        if (mine === generation.current) setError(failure);
      },
    );
  }, [connection, route, argsKey]);

  useEffect(() => {
    if (!connection) return undefined;
    reload();
    // Bursts of events (a page loading) cost one request, not one each.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = connection.onEvent((event) => {
      if (!events.includes(event.event)) return;
      clearTimeout(timer);
      timer = setTimeout(reload, 120);
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, [connection, reload, events.join(',')]);

  return { data, error, reload };
}
