/** A titled section of the page with its error line and actions. */
import type { ComponentChildren } from 'preact';

export function Panel(props: { id: string; title: string; error?: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section aria-labelledby={`${props.id}-title`} id={props.id}>
      <div class="panel-head">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        {props.actions}
      </div>
      {props.error && (
        <p role="alert" class="error">
          {props.error}
        </p>
      )}
      {props.children}
    </section>
  );
}
