/**
 * The vault's add and edit forms as values: which fields each kind of item has, what a
 * list shows of an item, and the bodies `vault-v1/create` and `vault-v1/update` take.
 *
 * A secret the host holds shows as the mask in its input; left as the mask it keeps its
 * value (the body leaves it out), emptied it is cleared (null), typed over it is sent.
 * Neither the mask nor an unchanged field is sent, so a save sends only what changed.
 */

import type { RouteArgs, RouteResult } from './protocol';

export type VaultItem = RouteResult<'vault-v1/read'>;
export type VaultSummary = RouteResult<'vault-v1/list_names'>['items'][number];
export type VaultKind = VaultItem['kind'];
export type CreateVaultArgs = RouteArgs<'vault-v1/create'>;
export type UpdateVaultArgs = RouteArgs<'vault-v1/update'>;

/** What a secret field the host holds shows in its input: the host's own mask (eight U+2022). */
export const SECRET_MASK = '••••••••';

export type VaultFieldName =
  | 'name'
  | 'sites'
  | 'username'
  | 'password'
  | 'totpSecret'
  | 'notes'
  | 'cardholder'
  | 'number'
  | 'expiry'
  | 'securityCode'
  | 'billingAddress'
  | 'email'
  | 'phone'
  | 'postalAddress';

export type SecretField = 'password' | 'totpSecret' | 'number' | 'securityCode';

export interface VaultFieldSpec {
  name: VaultFieldName;
  label: string;
  secret?: boolean;
  multiline?: boolean;
  hint?: string;
}

const SECRET_SET: Record<SecretField, 'passwordSet' | 'totpSecretSet' | 'numberSet' | 'securityCodeSet'> = {
  password: 'passwordSet',
  totpSecret: 'totpSecretSet',
  number: 'numberSet',
  securityCode: 'securityCodeSet',
};

export const KIND_TEXT: Record<VaultKind, string> = { login: 'Login', card: 'Card', contact: 'Contact info' };

/** The fields of each kind, in the order the form shows them. */
export const VAULT_FIELDS: Record<VaultKind, VaultFieldSpec[]> = {
  login: [
    { name: 'name', label: 'Name' },
    { name: 'sites', label: 'Sites', multiline: true, hint: 'One web address a line, like https://shop.example' },
    { name: 'username', label: 'User name' },
    { name: 'password', label: 'Password', secret: true },
    { name: 'totpSecret', label: 'One-time code secret (TOTP)', secret: true },
    { name: 'notes', label: 'Notes', multiline: true },
  ],
  card: [
    { name: 'name', label: 'Name' },
    { name: 'cardholder', label: 'Cardholder' },
    { name: 'number', label: 'Card number', secret: true },
    { name: 'expiry', label: 'Expiry', hint: 'MM/YY' },
    { name: 'securityCode', label: 'Security code', secret: true },
    { name: 'billingAddress', label: 'Billing address', multiline: true },
  ],
  contact: [
    { name: 'name', label: 'Name' },
    { name: 'email', label: 'Email' },
    { name: 'phone', label: 'Phone' },
    { name: 'postalAddress', label: 'Postal address', multiline: true },
  ],
};

export type VaultFormValues = Partial<Record<VaultFieldName, string>>;

export function isSecret(field: VaultFieldName): field is SecretField {
  return field in SECRET_SET;
}

function sitesOf(text: string): string[] {
  return text
    .split(/[\n,]/)
    .map((site) => site.trim())
    .filter(Boolean);
}

/** An empty form for a new item of ``kind``. */
export function emptyForm(kind: VaultKind): VaultFormValues {
  return Object.fromEntries(VAULT_FIELDS[kind].map((field) => [field.name, '']));
}

/** The edit form of ``item``: its fields, and the mask for each secret it holds. */
export function editForm(item: VaultItem): VaultFormValues {
  const values: VaultFormValues = {};
  for (const field of VAULT_FIELDS[item.kind]) {
    const name = field.name;
    if (isSecret(name)) values[name] = item[SECRET_SET[name]] ? SECRET_MASK : '';
    else if (name === 'sites') values.sites = item.sites.join('\n');
    else values[name] = item[name] ?? '';
  }
  return values;
}

/** The form with every secret it was given dropped: what stays once a save is under way. */
export function withoutSecrets(kind: VaultKind, values: VaultFormValues, item: VaultItem | null): VaultFormValues {
  const kept = { ...values };
  for (const field of VAULT_FIELDS[kind]) {
    if (isSecret(field.name)) kept[field.name] = item?.[SECRET_SET[field.name]] ? SECRET_MASK : '';
  }
  return kept;
}

/** The body that adds a new item: every field filled in, nothing empty. */
export function createBody(kind: VaultKind, values: VaultFormValues): CreateVaultArgs {
  const item: Record<string, unknown> = { kind };
  for (const field of VAULT_FIELDS[kind]) {
    const raw = values[field.name] ?? '';
    if (field.name === 'sites') item.sites = sitesOf(raw);
    else if (field.name === 'name') item.name = raw.trim();
    else if (raw.trim() && raw !== SECRET_MASK) item[field.name] = isSecret(field.name) ? raw : raw.trim();
  }
  return { item } as CreateVaultArgs;
}

/** The body that changes ``item``: only the fields that differ from what it holds. */
export function updateBody(item: VaultItem, values: VaultFormValues): UpdateVaultArgs {
  const body: Record<string, unknown> = { itemId: item.id };
  for (const field of VAULT_FIELDS[item.kind]) {
    const name = field.name;
    const raw = values[name] ?? '';
    if (isSecret(name)) {
      if (raw === SECRET_MASK) continue; // the mask keeps the saved secret
      if (raw === '') {
        if (item[SECRET_SET[name]]) body[name] = null;
        continue;
      }
      body[name] = raw;
    } else if (name === 'sites') {
      const sites = sitesOf(raw);
      if (sites.join('\n') !== item.sites.join('\n')) body.sites = sites;
    } else if (name === 'name') {
      if (raw.trim() !== item.name) body.name = raw.trim();
    } else {
      const now = raw.trim() || null;
      if (now !== (item[name] ?? null)) body[name] = now;
    }
  }
  return body as UpdateVaultArgs;
}

/** True when an update body changes nothing (only the item's id). */
export function changesNothing(body: UpdateVaultArgs): boolean {
  return Object.keys(body).length === 1;
}

const BRAND_TEXT: Record<string, string> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', discover: 'Discover', card: 'Card' };

/** What a list shows of an item besides its name: sites, card brand and last four, "set" marks. */
export function itemFacts(item: VaultItem): string[] {
  const facts: string[] = [];
  if (item.sites.length) facts.push(item.sites.join(', '));
  if (item.username) facts.push(item.username);
  if (item.cardLast4) facts.push(`${BRAND_TEXT[item.cardBrand ?? 'card'] ?? 'Card'} ending ${item.cardLast4}`);
  if (item.expiry) facts.push(`expires ${item.expiry}`);
  if (item.email) facts.push(item.email);
  if (item.phone) facts.push(item.phone);
  return facts;
}

/** The "set" marks of the secrets an item holds, by their labels. */
export function secretMarks(item: VaultItem): string[] {
  return VAULT_FIELDS[item.kind].filter((field) => isSecret(field.name) && item[SECRET_SET[field.name as SecretField]]).map((field) => `${field.label} set`);
}

/** The question a delete asks. */
export function deleteItemQuestion(name: string): string {
  return `Delete “${name}” from the vault? Agents can no longer use it.`;
}
