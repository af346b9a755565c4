/** Gated tools are listed by what they do, never by their family ids. */
import { describe, expect, it } from 'vitest';
import { alwaysAllowText, familyText } from '../src/host/tool-families';

describe('familyText', () => {
  it('says what each known family does', () => {
    for (const family of ['browser-input', 'browser-navigation', 'browser-script', 'browser-dialog', 'browser-vault']) {
      expect(familyText(family)).not.toContain('browser-');
    }
    expect(familyText('browser-dialog')).toBe("Answer a page's pop-up dialogs");
  });

  it('spaces an unknown family id rather than showing it raw', () => {
    expect(familyText('desktop-files')).toBe('desktop files');
  });
});

describe('alwaysAllowText', () => {
  it('offers an approval card\'s family in words', () => {
    expect(alwaysAllowText('browser-input')).toBe('Let this agent click, type and choose on pages without asking');
  });
});
