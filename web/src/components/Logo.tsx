/** The Crewhost mark and word. */
export function Logo({ compact = false }: { compact?: boolean }) {
  return (
    <span class="logo">
      <svg width="28" height="28" viewBox="0 0 32 32" aria-hidden="true" focusable="false">
        <rect width="32" height="32" rx="8" fill="var(--accent)" />
        <path
          d="M16 9.5 L9.5 20.5 M16 9.5 L22.5 20.5 M9.5 20.5 H22.5"
          stroke="#fff"
          stroke-opacity="0.55"
          stroke-width="1.6"
        />
        <circle cx="16" cy="9.5" r="3" fill="#fff" />
        <circle cx="9.5" cy="20.5" r="3" fill="#fff" />
        <circle cx="22.5" cy="20.5" r="3" fill="#fff" />
      </svg>
      {compact ? null : <span class="logo-word">Crewhost</span>}
    </span>
  );
}
