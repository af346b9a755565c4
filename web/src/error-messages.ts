/**
 * Turning the hub's errors into words for people, and deciding where they show:
 * next to the field the error names, or in a banner above the form.
 */

import { ApiError } from './api/client';

const MESSAGES: Record<string, string> = {
  badCredentials: 'The email or the password is not right.',
  emailTaken: 'An account with this email already exists. Sign in instead.',
  setupCodeInvalid:
    'This setup code is not valid (it may have been used already). Print a new one with "crewhost admin setup-code".',
  signupClosed: 'Sign-up on this hub needs an invitation.',
  invitationInvalid: 'This invitation is no longer valid. Ask for a new link.',
  alreadyMember: 'You are already a member of this team.',
  lastOwner: 'A team needs an owner. Make someone else an owner first.',
  ownerOnly: 'Only an owner can do that.',
  forbidden: 'Your role in this team does not allow that.',
  teamNotFound: 'This team does not exist, or you are no longer a member.',
  memberNotFound: 'That person is no longer a member of this team.',
  notAnImage: 'That file is not a PNG, JPEG or WebP image.',
  payloadTooLarge: 'That file is too large. The limit is 1 MiB.',
  unsupportedMediaType: 'Use a PNG, JPEG or WebP image.',
  sessionExpired: 'Your session has ended. Sign in again.',
  unauthenticated: 'Sign in to continue.',
  csrfRejected: 'The hub refused a request that did not come from this page. Reload and retry.',
  network: 'The hub could not be reached. Check your connection and try again.',
};

function sentence(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) return 'Something went wrong.';
  const first = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/** The hub's validation wording, said the way the form hints say it. */
function plainValidation(text: string): string {
  return text
    .replace(/^Value error,\s*/, '')
    .replace(/^String should have at most (\d+) characters?/, 'Use at most $1 characters')
    .replace(/^String should have at least (\d+) characters?/, 'Use at least $1 characters')
    .replace(/^Input should be greater than or equal to (\d+)/, 'Use $1 or more')
    .replace(/^Input should be less than or equal to (\d+)/, 'Use $1 or less');
}

/** A message for any error thrown by a call. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'rateLimited') {
      const wait = error.retryAfter;
      return wait ? `Too many attempts. Try again in ${wait} seconds.` : 'Too many attempts. Try again soon.';
    }
    if (error.code === 'invalidArgument') {
      // The hub says "field 'password': String should have ..."; the field is shown already.
      return sentence(plainValidation(error.message.replace(/^field '[^']*':\s*/, '')));
    }
    const known = MESSAGES[error.code];
    if (known) return known;
    if (error.status >= 500) return 'The hub ran into a problem. Try again in a moment.';
    return sentence(error.message);
  }
  return 'Something went wrong. Try again.';
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
