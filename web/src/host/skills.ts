/**
 * The team's skills (`skills-v1`) on the client side: a SKILL.md's parts for the preview,
 * the text a new skill starts from, the order the list shows them in, and a skill's `.zip`
 * sent and fetched in chunks.
 */

import { base64 } from './attachments';
import type { HostConnection } from './connection';
import type { RouteResult } from './protocol';

export type SkillView = RouteResult<'skills-v1/list'>['skills'][number];
export type VersionView = RouteResult<'skills-v1/versions'>['versions'][number];

/** The file every skill has: front matter with `name` and `description`, then Markdown. */
export const SKILL_FILE = 'SKILL.md';

/** The host refuses a larger `.zip` itself too (its MAX_ARCHIVE_BYTES). */
export const SKILL_ZIP_MAX_BYTES = 3 * 1024 * 1024;

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** A SKILL.md's Markdown instructions, without its front matter (all of it when it has none). */
export function skillBody(skillMd: string): string {
  const found = FRONT_MATTER.exec(skillMd);
  return found ? skillMd.slice(found[0].length).replace(/^(\r?\n)+/, '') : skillMd;
}

/** A skill's name as the host takes it: lowercase letters, digits and single hyphens. */
export function isSkillName(name: string): boolean {
  return name.length >= 1 && name.length <= 64 && /^[a-z0-9]+(-[a-z0-9]+)*$/.test(name);
}

/** The SKILL.md a new skill starts from (the description quoted as YAML takes any text). */
export function newSkillMd(name: string, description: string): string {
  const quoted = JSON.stringify(description.replace(/\s+/g, ' ').trim());
  return `---\nname: ${name}\ndescription: ${quoted}\n---\n\n# ${name}\n\nWhat to do, step by step.\n`;
}

/** Drafts first (they wait for a person), then the others, each by name. */
export function sortSkills(skills: readonly SkillView[]): SkillView[] {
  const draft = (s: SkillView) => (s.state === 'draft' ? 0 : 1);
  return [...skills].sort((a, b) => draft(a) - draft(b) || a.name.localeCompare(b.name));
}

/** How a version came to be, for the history list. */
export function versionText(version: VersionView): string {
  switch (version.change) {
    case 'created':
      return 'Created';
    case 'edited':
      return 'Edited';
    case 'uploaded':
      return 'Uploaded';
    case 'proposed':
      return 'Proposed by an agent';
    case 'reverted':
      return version.revertedFrom ? `Reverted to version ${version.revertedFrom}` : 'Reverted';
    default:
      return version.change;
  }
}

/** Send a skill's `.zip` in chunks; the host checks it whole before anything is saved. With
 * `replace`, a skill of the same name gets a new version instead of a refusal. */
export async function uploadSkillZip(connection: HostConnection, file: Blob, replace: boolean): Promise<SkillView> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const started = await connection.call('skills-v1/upload_start', { size: bytes.length });
  for (let offset = 0; offset < bytes.length; offset += started.chunkBytes) {
    const data = base64(bytes.subarray(offset, offset + started.chunkBytes));
    await connection.call('skills-v1/upload_chunk', { uploadId: started.uploadId, offset, data });
  }
  return connection.call('skills-v1/upload_finish', { uploadId: started.uploadId, replace });
}

/** A skill's `.zip` (one folder named after it), fetched in chunks; the newest version
 * unless one is named. */
export async function downloadSkillZip(connection: HostConnection, name: string, version?: number): Promise<{ fileName: string; blob: Blob }> {
  const parts: BlobPart[] = [];
  let offset = 0;
  let fileName = `${name}.zip`;
  for (;;) {
    const chunk = await connection.call('skills-v1/download', version ? { name, version, offset } : { name, offset });
    const bytes = Uint8Array.from(atob(chunk.data), (c) => c.charCodeAt(0));
    fileName = chunk.fileName;
    parts.push(bytes);
    offset += bytes.length;
    if (chunk.eof || bytes.length === 0) break;
  }
  return { fileName, blob: new Blob(parts, { type: 'application/zip' }) };
}
