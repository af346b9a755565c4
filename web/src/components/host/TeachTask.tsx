/**
 * "Teach a task" in the live view of an agent's tab (`browser-teach-v1`): the person takes
 * the tab and does the task; their steps are recorded; "Done" sends them to the agent, which
 * proposes a draft skill that the team reviews in Skills. Letting go of the tab ends the
 * recording with nothing sent.
 */

import { useEffect, useState } from 'preact/hooks';
import { describeError } from '../../error-messages';
import type { HostConnection } from '../../host/connection';
import type { RouteResult, TabView } from '../../host/protocol';
import { Banner } from '../Banner';

type Recording = RouteResult<'browser-teach-v1/start'>;
type Outcome = { tone: 'success' | 'info' | 'error'; text: string; review: boolean };

/** What the person reads once a recording is saved. */
export function savedText(saved: RouteResult<'browser-teach-v1/save'>, agentName: string): Outcome {
  if (!saved.sent) return { tone: 'info', text: 'Nothing was done after the first page, so nothing was sent.', review: false };
  const steps = saved.steps === 1 ? '1 step' : `${saved.steps} steps`;
  return { tone: 'success', text: `${agentName} got the ${steps} and is writing a draft skill from them. Review it in Skills, then save it for the team.`, review: true };
}

/** The recording of one tab's view: its buttons go in the toolbar, its outcome below it. */
export function useTeaching(connection: HostConnection, tab: TabView, holding: boolean, agentName: string) {
  const [recording, setRecording] = useState<Recording | null>(null);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [busy, setBusy] = useState(false);
  // The host ends a recording when its person lets go of the tab; so does this view.
  useEffect(() => {
    if (recording && !holding && !busy) {
      setRecording(null);
      setOutcome({ tone: 'info', text: 'The recording ended when you let go of the tab. Nothing was sent.', review: false });
    }
  }, [holding]);
  const act = <T,>(work: Promise<T>, then: (value: T) => void) => {
    setBusy(true);
    setOutcome(null);
    work.then(
      (value) => {
        setBusy(false);
        then(value);
      },
      (error: unknown) => {
        setBusy(false);
        setOutcome({ tone: 'error', text: describeError(error), review: false });
      },
    );
  };
  return {
    recording,
    busy,
    outcome,
    dismiss: () => setOutcome(null),
    start: () => act(connection.call('browser-teach-v1/start', { tabId: tab.id }), setRecording),
    save: () => {
      if (!recording) return;
      act(connection.call('browser-teach-v1/save', { recordingId: recording.id }), (saved) => {
        setRecording(null);
        setOutcome(savedText(saved, agentName));
      });
    },
    discard: () => {
      if (!recording) return;
      act(connection.call('browser-teach-v1/discard', { recordingId: recording.id }), () => setRecording(null));
    },
  };
}

export type Teaching = ReturnType<typeof useTeaching>;

export function TeachButtons({ teaching, disabled }: { teaching: Teaching; disabled: boolean }) {
  if (!teaching.recording) {
    return (
      <button
        type="button"
        class="btn btn-sm btn-secondary"
        disabled={disabled || teaching.busy}
        title="Show the agent how to do a task here: your steps are recorded, and the agent writes a draft skill from them"
        onClick={teaching.start}
      >
        Teach
      </button>
    );
  }
  return (
    <span class="teach-recording" role="group" aria-label="Recording a task">
      <span class="teach-dot" aria-hidden="true" />
      <span class="admin-muted">Recording</span>
      <button type="button" class="btn btn-sm btn-primary" disabled={teaching.busy} onClick={teaching.save}>
        Done, teach it
      </button>
      <button type="button" class="btn btn-sm btn-ghost" disabled={teaching.busy} onClick={teaching.discard}>
        Discard
      </button>
    </span>
  );
}

export function TeachOutcome({ teaching, onReview }: { teaching: Teaching; onReview: () => void }) {
  const outcome = teaching.outcome;
  if (!outcome) return null;
  return (
    <div class="teach-outcome">
      <Banner tone={outcome.tone}>{outcome.text}</Banner>
      <div class="admin-inline">
        {outcome.review ? (
          <button type="button" class="btn btn-sm btn-primary" onClick={onReview}>
            Open Skills
          </button>
        ) : null}
        <button type="button" class="btn btn-sm btn-ghost" onClick={teaching.dismiss}>
          Close
        </button>
      </div>
    </div>
  );
}
