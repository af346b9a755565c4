/**
 * Files a member attaches to a message: picked, dropped or pasted, kept in memory until
 * sent, then uploaded into the agent's workspace (`workspace-v1`) and named in
 * `threads-v1/send`. A file's type comes from its name, as on the host: images show
 * inline, an SVG only from a `data:` URL (an object URL would carry the app's origin),
 * everything else is a file chip.
 */

import type { HostConnection } from './connection';

/** The host's default `attachment_max_bytes`; the host refuses a larger one itself too. */
export const ATTACHMENT_MAX_BYTES = 20 * 1024 * 1024;
/** At most this many files go with one message (the host's MAX_ATTACHMENTS). */
export const MAX_ATTACHMENTS = 10;
/** Largest file whose preview is read in the browser. */
const PREVIEW_MAX_BYTES = 1024 * 1024;

export type PreviewKind = 'image' | 'svg' | 'file';

const RASTER = new Set(['png', 'jpg', 'jpeg', 'webp', 'gif']);

/** How a file shows, from its name only (a supplied MIME type never enables a preview). */
export function previewKindOf(name: string): PreviewKind {
  const extension = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  if (RASTER.has(extension)) return 'image';
  if (extension === 'svg') return 'svg';
  return 'file';
}

/** A preview address that is safe to put in an `<img>`: only `data:` URLs of images. */
export function safePreviewUrl(url: string | null | undefined): string | null {
  return url && /^data:image\/(png|jpeg|webp|gif|svg\+xml);base64,[A-Za-z0-9+/=]+$/.test(url) ? url : null;
}

export interface PendingFile {
  key: string;
  file: File;
  kind: PreviewKind;
  /** A `data:` URL for an image or SVG small enough to preview, once read. */
  preview: string | null;
}

/** The files kept after adding some: over-size files and those past the count are refused. */
export function addFiles(current: readonly PendingFile[], files: readonly File[], makeKey: () => string): { files: PendingFile[]; refused: string[] } {
  const next = [...current];
  const refused: string[] = [];
  for (const file of files) {
    if (file.size > ATTACHMENT_MAX_BYTES) refused.push(`${file.name} is larger than ${ATTACHMENT_MAX_BYTES / (1024 * 1024)} MiB.`);
    else if (next.length >= MAX_ATTACHMENTS) refused.push(`${file.name}: a message takes at most ${MAX_ATTACHMENTS} files.`);
    else next.push({ key: makeKey(), file, kind: previewKindOf(file.name), preview: null });
  }
  return { files: next, refused };
}

/** A file's `data:` URL for its preview, or null for a file that shows as a chip. */
export function readPreview(pending: PendingFile): Promise<string | null> {
  if (pending.kind === 'file' || pending.file.size > PREVIEW_MAX_BYTES) return Promise.resolve(null);
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(safePreviewUrl(typeof reader.result === 'string' ? reader.result : null));
    reader.onerror = () => resolve(null);
    reader.readAsDataURL(pending.file);
  });
}

/** Bytes as base64, for a Team API chunk. */
export function base64(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

/** Upload one file into the agent's workspace; the answer is its path there. */
export async function uploadToWorkspace(connection: HostConnection, agentId: string, file: File, folder: string): Promise<string> {
  const path = folder ? `${folder}/${file.name}` : file.name;
  const started = await connection.call('workspace-v1/upload_start', { agentId, path, size: file.size });
  const bytes = new Uint8Array(await file.arrayBuffer());
  try {
    for (let offset = 0; offset < bytes.length; offset += started.chunkBytes) {
      const data = base64(bytes.subarray(offset, offset + started.chunkBytes));
      await connection.call('workspace-v1/upload_chunk', { uploadId: started.uploadId, offset, data });
    }
    return (await connection.call('workspace-v1/upload_finish', { uploadId: started.uploadId })).path;
  } catch (error) {
    void connection.call('workspace-v1/upload_cancel', { uploadId: started.uploadId }).catch(() => undefined);
    throw error;
  }
}
