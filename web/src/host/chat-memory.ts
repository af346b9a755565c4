/**
 * What the chat keeps for a host across connections, in memory only (never localStorage):
 * each thread's draft, the messages that did not go out and their files (the bytes, and
 * their workspace paths once uploaded, so a Retry sends them too). A reconnect builds a new
 * connection and new screens; this outlives them, and goes with the host screen.
 */

import type { UserItem } from './chat-stream';

export class ChatMemory {
  private readonly drafts = new Map<string, string>();
  private readonly unsent = new Map<string, UserItem[]>();
  private readonly files = new Map<string, { files: File[]; paths: string[] | null }>();

  /** The files that go with the message `key`; their paths once they are uploaded. */
  setFiles(key: string, files: File[], paths: string[] | null): void {
    if (files.length) this.files.set(key, { files, paths });
  }

  filesOf(key: string): { files: File[]; paths: string[] | null } {
    return this.files.get(key) ?? { files: [], paths: [] };
  }

  /** The message went out: its files need not be kept any more. */
  sent(key: string): void {
    this.files.delete(key);
  }

  draft(threadId: string): string {
    return this.drafts.get(threadId) ?? '';
  }

  setDraft(threadId: string, text: string): void {
    if (text) this.drafts.set(threadId, text);
    else this.drafts.delete(threadId);
  }

  /** Messages of the thread that failed (or were under way when the connection went). */
  failed(threadId: string): UserItem[] {
    return this.unsent.get(threadId) ?? [];
  }

  /** Keep the thread's unsent messages, marked failed: none is ever sent again on its own. */
  keepUnsent(threadId: string, items: readonly UserItem[]): void {
    const failed = items.filter((item) => item.delivery !== 'sent').map((item) => ({ ...item, delivery: 'failed' as const, failure: item.failure ?? 'Not sent: the connection was lost.' }));
    if (failed.length) this.unsent.set(threadId, failed);
    else this.unsent.delete(threadId);
  }
}
