/** A gated tool family in words, for the person who chooses whether it runs without asking. */

const FAMILY_WORDS: Record<string, string> = {
  'browser-input': 'Click, type and choose on pages',
  'browser-navigation': 'Open pages and tabs',
  'browser-script': 'Run scripts in pages',
  'browser-dialog': "Answer a page's pop-up dialogs",
  'browser-vault': 'Fill in saved passwords and secrets from the vault',
};

/** The family's words; one the client does not know yet is named by its id, spaced. */
export function familyText(family: string): string {
  return FAMILY_WORDS[family] ?? family.replace(/[-_]/g, ' ');
}

/** An approval card's offer to stop asking for the family, in words. */
export function alwaysAllowText(family: string): string {
  const words = familyText(family);
  return `Let this agent ${words.charAt(0).toLowerCase()}${words.slice(1)} without asking`;
}
