/** A person's picture, or their initials on a soft colour picked from their id. */

const TINTS = ['#dbe4ff', '#d3f9d8', '#fff3bf', '#ffe3e3', '#e5dbff', '#c5f6fa', '#ffe8cc'];

function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0]!, words[words.length - 1]!] : words;
  return letters.map((word) => word.charAt(0).toUpperCase()).join('') || '?';
}

function tint(seed: string): string {
  let hash = 0;
  for (const ch of seed) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return TINTS[hash % TINTS.length]!;
}

interface AvatarProps {
  name: string;
  seed: string;
  src?: string | null;
  size?: number;
}

export function Avatar({ name, seed, src, size = 32 }: AvatarProps) {
  const style = { width: `${size}px`, height: `${size}px`, fontSize: `${Math.round(size * 0.4)}px` };
  if (src) return <img class="avatar" src={src} alt="" style={style} />;
  return (
    <span class="avatar avatar-initials" style={{ ...style, background: tint(seed) }} aria-hidden="true">
      {initials(name)}
    </span>
  );
}
