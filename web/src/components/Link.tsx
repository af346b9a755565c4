import type { ComponentChildren, JSX } from 'preact';
import { navigate } from '../router';

type LinkProps = Omit<JSX.HTMLAttributes<HTMLAnchorElement>, 'href'> & {
  href: string;
  children: ComponentChildren;
};

/** An <a> that moves inside the app without reloading (a modified click still opens a tab). */
export function Link({ href, onClick, children, ...rest }: LinkProps) {
  function handle(event: JSX.TargetedMouseEvent<HTMLAnchorElement>) {
    if (typeof onClick === 'function') onClick(event);
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  }
  return (
    <a href={href} onClick={handle} {...rest}>
      {children}
    </a>
  );
}
