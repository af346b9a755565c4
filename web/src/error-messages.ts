/**
 * Turning the hub's and the hosts' errors into words for people, and deciding where
 * they show: next to the field the error names, or in a banner above the form.
 *
 * The words come from one table (`errors/messages.ts`), looked up by the error's code;
 * a server's own message text is never shown, except a validation failure's, which is
 * worded the way the form hints are.
 */

import { ApiError } from './api/client';
import { ERROR_MESSAGES, UNKNOWN_ERROR } from './errors/messages';
import { HostCallError } from './host/connection';

function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return '';
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/** The servers' validation wording, said the way the form hints say it. */
function plainValidation(text: string): string {
  return text
    .replace(/^field '[^']*':\s*/, '')
    .replace(/^Value error,\s*/, '')
    .replace(/^String should have at most (\d+) characters?/, 'Use at most $1 characters')
    .replace(/^String should have at least (\d+) characters?/, 'Use at least $1 characters')
    .replace(/^Input should be greater than or equal to (\d+)/, 'Use $1 or more')
    .replace(/^Input should be less than or equal to (\d+)/, 'Use $1 or less');
}

/** The words for an error code from the hub or a host; an unknown code gets a general sentence. */
export function describeCode(code: string, from: 'hub' | 'host'): string {
  return ERROR_MESSAGES.get(code) ?? UNKNOWN_ERROR[from];
}

/** A message for any error thrown by a call (to the hub or to a host). */
export function describeError(error: unknown, fallback = 'Something went wrong. Try again.'): string {
  if (error instanceof ApiError || error instanceof HostCallError) {
    const from = error instanceof ApiError ? 'hub' : 'host';
    const retryAfter = error instanceof ApiError ? error.retryAfter : null;
    if (error.code === 'rateLimited' && retryAfter) return `Too many attempts. Try again in ${retryAfter} seconds.`;
    if (error.code === 'invalidArgument') {
      // "field 'password': String should have ..."; the form shows the field already.
      return sentence(plainValidation(error.message)) || describeCode(error.code, from);
    }
    if (!ERROR_MESSAGES.has(error.code) && error instanceof ApiError && error.status >= 500) {
      return 'The hub ran into a problem. Try again in a moment.';
    }
    return describeCode(error.code, from);
  }
  // The client's own failures that carry a code (a host's unsigned answer, ...).
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && ERROR_MESSAGES.has(code)) return describeCode(code, 'host');
  return fallback;
}

export interface FormErrors<F extends string> {
  fields: Partial<Record<F, string>>;
  banner: string | null;
}

/** Put an error next to the form field it names (if the form has it), or in the banner. */
export function formErrors<F extends string>(error: unknown, fields: readonly F[]): FormErrors<F> {
  if (error instanceof ApiError && error.field) {
    const field = fields.find((name) => name === error.field);
    if (field) return { fields: { [field]: describeError(error) } as Partial<Record<F, string>>, banner: null };
  }
  return { fields: {}, banner: describeError(error) };
}

export const NO_ERRORS = { fields: {}, banner: null } as const;
