/**
 * The one way the web client talks to the hub: a thin `fetch` wrapper.
 *
 * - Every write (anything but GET/HEAD) carries `X-Crewhost-CSRF: 1`; the browser adds Origin.
 * - The session lives in an HttpOnly cookie, so requests go with `credentials: 'same-origin'`.
 * - A refusal becomes an `ApiError` with the hub's stable `code` (and `field`, when it names one).
 * - A 401 on a call that needs a session tells the app to show sign-in (see `onSignInNeeded`).
 */

import type { components } from './schema';

type ErrorReply = components['schemas']['ErrorReply'];

export const CSRF_HEADER = 'X-Crewhost-CSRF';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | null;
  /** Seconds to wait, from Retry-After (rate limits). */
  readonly retryAfter: number | null;

  constructor(
    status: number,
    code: string,
    message: string,
    field: string | null = null,
    retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.retryAfter = retryAfter;
  }
}

export interface RequestOptions {
  /** A JSON body. */
  json?: unknown;
  /** A raw body (an avatar image), sent with its own Content-Type. */
  raw?: Blob;
  /**
   * Whether a 401 means "show sign-in". True for calls that need a session; public calls
   * (sign-in, sign-up, invitation preview) and probes ("am I signed in?") set it to false.
   */
  signInOn401?: boolean;
}

type SignInNeededListener = (error: ApiError) => void;
let signInNeeded: SignInNeededListener | null = null;

/** Set what happens when a call that needs a session gets a 401. Returns an undo function. */
export function onSignInNeeded(listener: SignInNeededListener): () => void {
  signInNeeded = listener;
  return () => {
    if (signInNeeded === listener) signInNeeded = null;
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

export async function apiRequest(
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<unknown> {
  const upper = method.toUpperCase();
  const headers: Record<string, string> = { Accept: 'application/json' };
  let body: BodyInit | undefined;
  if (!SAFE_METHODS.has(upper)) headers[CSRF_HEADER] = '1';
  if (options.raw !== undefined) {
    body = options.raw;
    headers['Content-Type'] = options.raw.type || 'application/octet-stream';
  } else if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['Content-Type'] = 'application/json';
  }

  let response: Response;
  try {
    response = await fetch(path, { method: upper, headers, body, credentials: 'same-origin' });
  } catch {
    throw new ApiError(0, 'network', 'The hub could not be reached. Check your connection.');
  }

  if (response.ok) {
    if (response.status === 204) return undefined;
    const text = await response.text();
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  const error = await errorFrom(response);
  if (error.status === 401 && options.signInOn401 !== false) signInNeeded?.(error);
  throw error;
}

/** Turn a failed response into an ApiError, whatever its body holds. */
export async function errorFrom(response: Response): Promise<ApiError> {
  const retryAfter = parseRetryAfter(response.headers.get('Retry-After'));
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(await response.text());
  } catch {
    parsed = null;
  }
  if (isErrorReply(parsed)) {
    const { code, message, field } = parsed.error;
    return new ApiError(response.status, code, message, field ?? null, retryAfter);
  }
  const message = response.statusText || `The hub answered with status ${response.status}.`;
  return new ApiError(response.status, 'httpError', message, null, retryAfter);
}

function isErrorReply(value: unknown): value is ErrorReply {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = (value as { error: unknown }).error;
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

function parseRetryAfter(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}
