import type { ComponentChildren } from 'preact';
import { Logo } from './Logo';

/** The centred card of the pages before sign-in: setup, sign-in, sign-up, join. */
export function AuthLayout(props: {
  title: string;
  lead?: ComponentChildren;
  children: ComponentChildren;
  footer?: ComponentChildren;
}) {
  return (
    <div class="auth">
      <main class="auth-main">
        <div class="auth-brand">
          <Logo />
        </div>
        <section class="auth-card" aria-labelledby="auth-title">
          <h1 id="auth-title">{props.title}</h1>
          {props.lead ? <p class="auth-lead">{props.lead}</p> : null}
          {props.children}
        </section>
        {props.footer ? <p class="auth-footer">{props.footer}</p> : null}
      </main>
    </div>
  );
}
