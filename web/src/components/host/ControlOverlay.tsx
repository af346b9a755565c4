/**
 * What floats over a live view about control of its tab: who holds it, a hint for a
 * watcher who clicks the view (take control, or ask the holder for it), and the requests
 * for control the holder may grant or dismiss.
 */

import { holderName, type ControlRequest, type MemberNames } from '../../host/control-requests';
import { Icon } from '../Icon';

/** Shown over the view to everyone but the holder while a person holds the tab. */
export function HolderBadge({ text }: { text: string }) {
  return (
    <p class="view-holder" role="status">
      <Icon name="hand" size={14} />
      {text}
    </p>
  );
}

/**
 * The hint after a watcher clicks the view. ``holder`` is the name of the person in control
 * (null when nobody is); ``asked`` says this member's request waits for an answer.
 */
export function WatchingHint(props: {
  holder: string | null;
  asked: boolean;
  onTake: () => void;
  onAsk: () => void;
  onClose: () => void;
}) {
  const { holder, asked } = props;
  let text = 'You’re watching. Take control to click and type.';
  if (holder && asked) text = `You’re watching. You asked ${holder} for control; waiting for an answer.`;
  else if (holder) text = `You’re watching. ${holder} is in control: ask for control to click and type.`;
  return (
    <div class="view-hint" role="status" aria-label="Watching">
      <span>{text}</span>
      {holder === null ? (
        <button type="button" class="btn btn-primary btn-sm" onClick={props.onTake}>
          <Icon name="hand" size={16} />
          Take control
        </button>
      ) : asked ? null : (
        <button type="button" class="btn btn-primary btn-sm" onClick={props.onAsk}>
          <Icon name="hand" size={16} />
          Ask for control
        </button>
      )}
      <button type="button" class="link-button" onClick={props.onClose}>
        Dismiss
      </button>
    </div>
  );
}

/** The holder's list of members asking for the tab, each to grant or dismiss. */
export function IncomingRequests(props: {
  requests: ControlRequest[];
  names: MemberNames;
  onGrant: (requestId: string) => void;
  onDismiss: (requestId: string) => void;
}) {
  if (props.requests.length === 0) return null;
  return (
    <ul class="control-requests" aria-label="Requests for control">
      {props.requests.map((request) => (
        <li key={request.id} class="control-request" role="status">
          <span>
            <strong>{holderName(request.accountId, props.names)}</strong> asks for control of this tab.
          </span>
          <button type="button" class="btn btn-primary btn-sm" onClick={() => props.onGrant(request.id)}>
            Give control
          </button>
          <button type="button" class="btn btn-ghost btn-sm" onClick={() => props.onDismiss(request.id)}>
            Dismiss
          </button>
        </li>
      ))}
    </ul>
  );
}
