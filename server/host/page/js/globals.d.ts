// The state the tools keep in their isolated world between calls (lib/world.js): the page
// never sees it. Only the scripts that run isolated touch it.

/** One frame's part of a snapshot: the elements its refs name, in ref order. */
interface SnapshotRegistry {
  elements: (Element | null)[];
  /** `[role, name]` of each ref; null for a frame element, which is no ref. */
  info: ([string, string] | null)[];
  doc: Document;
  /** The frame element whose document this is; null for the main frame's. */
  owner: HTMLIFrameElement | null;
  observer: MutationObserver;
  /** Child-list changes seen since the snapshot. */
  mutations: number;
}

/** An element a resolved target names, and the frame element holding its document. */
interface Picked {
  el: Element;
  owner: HTMLIFrameElement | null;
}

interface ToolsWorld {
  /** Names this world: a call checks it before it runs. */
  token: string;
  /** Revision -> frame key -> registry. */
  snapshots: Map<number, Map<string, SnapshotRegistry>>;
  picks: Map<string, Picked>;
  picked: number;
}

declare var crewhostTools: ToolsWorld | undefined;
