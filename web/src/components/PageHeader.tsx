import type { ComponentChildren } from 'preact';

/** The title of a page inside the shell, with a line of context and its main actions. */
export function PageHeader(props: {
  title: string;
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <header class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.subtitle ? <p class="page-subtitle">{props.subtitle}</p> : null}
      </div>
      {props.actions ? <div class="page-actions">{props.actions}</div> : null}
    </header>
  );
}
