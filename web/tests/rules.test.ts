import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/api/client';
import type { InvitationView } from '../src/api/types';
import { avatarFileProblem, MAX_AVATAR_BYTES } from '../src/avatar-file';
import { checkSignUp } from '../src/components/SignUpForm';
import { describeError, formErrors } from '../src/error-messages';
import { assignableRoles, canChangeRole, canManage, canRemove } from '../src/roles';
import { invitationStatus } from '../src/invitation-state';

describe('role rules (as the hub enforces them)', () => {
  it('members manage nothing', () => {
    expect(canManage('member')).toBe(false);
    expect(assignableRoles('member')).toEqual([]);
    expect(canChangeRole('member', 'member')).toBe(false);
    expect(canRemove('member', 'member', false)).toBe(false);
  });

  it('admins cannot touch owners nor make owners', () => {
    expect(assignableRoles('admin')).toEqual(['member', 'admin']);
    expect(canChangeRole('admin', 'owner')).toBe(false);
    expect(canChangeRole('admin', 'admin')).toBe(true);
    expect(canRemove('admin', 'owner', false)).toBe(false);
    expect(canRemove('admin', 'member', false)).toBe(true);
  });

  it('owners do everything, but leave rather than remove themselves', () => {
    expect(assignableRoles('owner')).toEqual(['member', 'admin', 'owner']);
    expect(canChangeRole('owner', 'owner')).toBe(true);
    expect(canRemove('owner', 'owner', false)).toBe(true);
    expect(canRemove('owner', 'owner', true)).toBe(false);
  });
});

describe('error placement', () => {
  const invalid = new ApiError(400, 'invalidArgument', "field 'password': String should have at least 10 characters", 'password');

  it('puts an error next to the field it names', () => {
    expect(formErrors(invalid, ['email', 'password'])).toEqual({
      fields: { password: 'Use at least 10 characters.' },
      banner: null,
    });
  });

  it('puts it in the banner when the form has no such field', () => {
    const result = formErrors(new ApiError(400, 'invalidArgument', 'give one code', 'invitationCode'), ['email']);
    expect(result.fields).toEqual({});
    expect(result.banner).toBe('Give one code.');
  });

  it('words the hub\'s validation messages like the form hints', () => {
    const long = new ApiError(400, 'invalidArgument', "field 'password': String should have at most 1024 characters", 'password');
    expect(describeError(long)).toBe('Use at most 1024 characters.');
    const email = new ApiError(400, 'invalidArgument', "field 'email': Value error, not an email address", 'email');
    expect(describeError(email)).toBe('Not an email address.');
  });

  it('words known codes for people', () => {
    expect(describeError(new ApiError(401, 'badCredentials', 'x'))).toMatch(/email or the password/);
    expect(describeError(new ApiError(409, 'lastOwner', 'x'))).toMatch(/needs an owner/);
    expect(describeError(new ApiError(429, 'rateLimited', 'x', null, 12))).toBe('Too many attempts. Try again in 12 seconds.');
    expect(describeError(new Error('boom'))).toBe('Something went wrong. Try again.');
  });
});

describe('sign-up checks', () => {
  it('ask for a 10-character password and the fields', () => {
    expect(checkSignUp({ name: '', email: 'nope', password: 'short', teamName: '' }, true)).toEqual({
      name: 'Enter your name.',
      email: 'Enter an email address.',
      password: 'Use at least 10 characters.',
      teamName: 'Name your team.',
    });
    expect(checkSignUp({ name: 'Ada', email: 'ada@example.com', password: '0123456789', teamName: '' }, false)).toEqual({});
  });
});

describe('avatar files', () => {
  it('accepts PNG, JPEG and WebP up to 1 MiB', () => {
    expect(avatarFileProblem({ type: 'image/png', size: 10 })).toBeNull();
    expect(avatarFileProblem({ type: 'image/webp', size: MAX_AVATAR_BYTES })).toBeNull();
    expect(avatarFileProblem({ type: 'image/gif', size: 10 })).toMatch(/PNG, JPEG or WebP/);
    expect(avatarFileProblem({ type: 'image/jpeg', size: MAX_AVATAR_BYTES + 1 })).toMatch(/limit is 1 MiB/);
  });
});

describe('invitation status', () => {
  const base: InvitationView = {
    id: 'i',
    role: 'member',
    createdBy: null,
    createdAt: 0,
    expiresAt: 1000,
    maxUses: 1,
    uses: 0,
    revoked: false,
    usable: true,
  };
  it.each<[Partial<InvitationView>, string]>([
    [{}, 'active'],
    [{ revoked: true, usable: false }, 'revoked'],
    [{ uses: 1, usable: false }, 'usedUp'],
    [{ expiresAt: 10, usable: false }, 'expired'],
  ])('%j is %s', (change, status) => {
    expect(invitationStatus({ ...base, ...change }, 500)).toBe(status);
  });
});
