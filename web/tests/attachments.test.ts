/** Attachments in the composer: typed by name, limited in size and count, previews only from data: URLs. */
import { describe, expect, it } from 'vitest';
import { ATTACHMENT_MAX_BYTES, MAX_ATTACHMENTS, addFiles, previewKindOf, readPreview, safePreviewUrl } from '../src/host/attachments';

function file(name: string, size: number, type = ''): File {
  const f = new File(['x'], name, { type });
  Object.defineProperty(f, 'size', { value: size });
  return f;
}

let n = 0;
const key = () => `k${n++}`;

describe('attachments', () => {
  it('takes the preview from the name, never from the supplied type', () => {
    expect(previewKindOf('photo.JPG')).toBe('image');
    expect(previewKindOf('logo.svg')).toBe('svg');
    for (const name of ['song.mp3', 'clip.mov', 'clip.mp4', 'pack.zip', 'photo.heic', 'README']) expect(previewKindOf(name)).toBe('file');
    expect(addFiles([], [file('a.txt', 3, 'image/png')], key).files[0].kind).toBe('file');
  });

  it('refuses files over the size limit and past the count', () => {
    const big = addFiles([], [file('big.zip', ATTACHMENT_MAX_BYTES + 1), file('ok.zip', ATTACHMENT_MAX_BYTES)], key);
    expect(big.files.map((f) => f.file.name)).toEqual(['ok.zip']);
    expect(big.refused).toEqual(['big.zip is larger than 20 MiB.']);
    const many = addFiles([], Array.from({ length: MAX_ATTACHMENTS + 2 }, (_, i) => file(`${i}.txt`, 1)), key);
    expect(many.files).toHaveLength(MAX_ATTACHMENTS);
    expect(many.refused).toHaveLength(2);
  });

  it('shows previews only from image data: URLs', () => {
    expect(safePreviewUrl('data:image/svg+xml;base64,PHN2Zz4=')).toBe('data:image/svg+xml;base64,PHN2Zz4=');
    expect(safePreviewUrl('blob:https://app.example/1')).toBeNull();
    expect(safePreviewUrl('data:text/html;base64,PGI+')).toBeNull();
    expect(safePreviewUrl('javascript:alert(1)')).toBeNull();
  });

  it('reads an SVG preview as a data: URL and a plain file not at all', async () => {
    const svg = new File(['<svg xmlns="http://www.w3.org/2000/svg"/>'], 'logo.svg', { type: 'image/svg+xml' });
    expect(await readPreview({ key: 'a', file: svg, kind: 'svg', preview: null })).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(await readPreview({ key: 'b', file: new File(['x'], 'a.zip'), kind: 'file', preview: null })).toBeNull();
  });
});
