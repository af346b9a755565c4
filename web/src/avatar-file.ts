/** What the hub accepts as an avatar (services/accounts.py), checked before uploading. */

export const AVATAR_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;
export const MAX_AVATAR_BYTES = 1024 * 1024;

/** Why this file cannot be an avatar, or null if it can. */
export function avatarFileProblem(file: Pick<File, 'type' | 'size'>): string | null {
  if (!(AVATAR_TYPES as readonly string[]).includes(file.type)) {
    return 'Choose a PNG, JPEG or WebP image.';
  }
  if (file.size > MAX_AVATAR_BYTES) {
    const mib = (file.size / MAX_AVATAR_BYTES).toFixed(1);
    return `That image is ${mib} MiB; the limit is 1 MiB.`;
  }
  if (file.size === 0) return 'That file is empty.';
  return null;
}
