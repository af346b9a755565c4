import { Component, type ComponentChildren } from 'preact';

/**
 * Shows `fallback` instead of `children` once rendering them has thrown, so one part that
 * cannot be shown (one chat message) leaves the rest of the page in place. A new
 * `resetKey` (a streaming message's text so far) tries the children again.
 */
export class ErrorBoundary extends Component<{ fallback: ComponentChildren; children: ComponentChildren; resetKey?: unknown }, { failed: boolean }> {
  override state = { failed: false };

  override componentDidUpdate(previous: { resetKey?: unknown }): void {
    if (this.state.failed && previous.resetKey !== this.props.resetKey) this.setState({ failed: false });
  }

  static override getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }

  override componentDidCatch(error: unknown): void {
    console.error(error);
  }

  override render() {
    return this.state.failed ? this.props.fallback : this.props.children;
  }
}
