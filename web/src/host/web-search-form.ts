/**
 * The web search settings form as values: what each engine needs, and the body
 * `web-search-v1/set` takes. A key is never shown back: an empty key input keeps the key
 * already set for the same engine (`keepKey`).
 */

import type { RouteArgs, RouteResult } from './protocol';

export type WebSearchView = RouteResult<'web-search-v1/get'>;
export type Engine = WebSearchView['engine'];
export type SetWebSearchArgs = RouteArgs<'web-search-v1/set'>;

export const ENGINES: ReadonlyArray<{ id: Engine; name: string; needs: string }> = [
  { id: 'duckduckgo', name: 'DuckDuckGo', needs: 'Needs nothing; busy hosts may be limited.' },
  { id: 'searxng', name: 'SearXNG', needs: 'Needs the address of a SearXNG instance with its JSON format on.' },
  { id: 'brave', name: 'Brave Search', needs: 'Needs a Brave Search API key.' },
  { id: 'google', name: 'Google Programmable Search', needs: 'Needs an API key and the search engine id (cx).' },
];

export function engineName(engine: Engine): string {
  return ENGINES.find((e) => e.id === engine)?.name ?? engine;
}

export function needsKey(engine: Engine): boolean {
  return engine === 'brave' || engine === 'google';
}

export interface WebSearchForm {
  engine: Engine;
  baseUrl: string;
  engineId: string;
  key: string;
}

export function startForm(current: WebSearchView): WebSearchForm {
  return { engine: current.engine, baseUrl: current.baseUrl ?? '', engineId: current.engineId ?? '', key: '' };
}

/** True when the engine chosen in the form can keep the key the host already has. */
export function keyKept(current: WebSearchView, form: WebSearchForm): boolean {
  return needsKey(form.engine) && current.keySet && current.engine === form.engine;
}

/** The body that saves ``form``; only the fields its engine takes. */
export function setBody(current: WebSearchView, form: WebSearchForm): SetWebSearchArgs {
  const body: SetWebSearchArgs = { engine: form.engine };
  if (form.engine === 'searxng') body.baseUrl = form.baseUrl.trim();
  if (form.engine === 'google') body.engineId = form.engineId.trim();
  if (needsKey(form.engine)) {
    const key = form.key.trim();
    if (key) body.key = key;
    else if (keyKept(current, form)) body.keepKey = true;
  }
  return body;
}
