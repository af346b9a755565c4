/**
 * A browser's user-agent string as a person would say it: "Chrome 156 on Linux".
 *
 * Only the common browsers and systems are named; anything else falls back to the
 * product token at the start of the string, so nothing is ever shown raw and long.
 */

// Order matters: Edge and Opera also say "Chrome", Chrome also says "Safari".
const BROWSERS: readonly [name: string, pattern: RegExp][] = [
  ['Edge', /\bEdg(?:e|A|iOS)?\/(\d+)/],
  ['Opera', /\bOPR\/(\d+)/],
  ['Samsung Internet', /\bSamsungBrowser\/(\d+)/],
  ['Firefox', /\b(?:Firefox|FxiOS)\/(\d+)/],
  ['Chrome', /\b(?:HeadlessChrome|Chrome|CriOS)\/(\d+)/],
  ['Safari', /\bVersion\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//],
];

const SYSTEMS: readonly [name: string, pattern: RegExp][] = [
  ['iOS', /\b(?:iPhone|iPad|iPod)\b/],
  ['Android', /\bAndroid\b/],
  ['ChromeOS', /\bCrOS\b/],
  ['Windows', /\bWindows\b/],
  ['macOS', /\bMac OS X\b|\bMacintosh\b/],
  ['Linux', /\bLinux\b|\bX11\b/],
];

function browserOf(userAgent: string): string | null {
  for (const [name, pattern] of BROWSERS) {
    const match = pattern.exec(userAgent);
    if (match) return `${name} ${match[1]}`;
  }
  const product = /^([A-Za-z][\w.-]{0,30})\/(\d+)/.exec(userAgent);
  return product ? `${product[1]} ${product[2]}` : null;
}

function systemOf(userAgent: string): string | null {
  for (const [name, pattern] of SYSTEMS) {
    if (pattern.test(userAgent)) return name;
  }
  return null;
}

/** "Chrome 156 on Linux", "Safari 18 on iOS", "Firefox 140", or "Unknown browser". */
export function describeUserAgent(userAgent: string): string {
  const browser = browserOf(userAgent.trim());
  const system = systemOf(userAgent);
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? (system ? `A browser on ${system}` : 'Unknown browser');
}
