import type { LiveEvent } from "../api/types";
import { advanceCursor, resumeUrl, type ResumeCursor } from "./cursor";

/** "ended": the case is gone, so there is deliberately no stream (not a failure to reconnect). */
export type ConnectionState = "connecting" | "live" | "reconnecting" | "ended";

export interface StreamCallbacks {
  onEvent: (event: LiveEvent) => void;
  onConnectionChange: (state: ConnectionState) => void;
  /** Every (re)open: the caller resyncs its snapshot, since events may have landed while we were away. */
  onOpen?: () => void;
  /** Every failure: the caller may check whether the case or the session is gone. */
  onError?: () => void;
}

export interface StreamOptions {
  eventTypes: readonly string[];
  createSource?: (url: string) => EventSource;
  backoffMs?: { initial: number; max: number };
}

const DEFAULT_BACKOFF = { initial: 250, max: 4000 };

/** Delay before reconnect attempt number `attempt` (0-based): doubles from `initial`, capped at `max`. */
export function reconnectDelay(attempt: number, backoff = DEFAULT_BACKOFF): number {
  return Math.min(backoff.max, backoff.initial * 2 ** Math.max(0, attempt));
}

export function parseFrame(type: string, message: MessageEvent<string>): LiveEvent {
  let data: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(message.data);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) data = parsed as Record<string, unknown>;
  } catch {
    // A frame we cannot read still means "something changed"; the snapshot refetch tells us what.
  }
  const id = Number(message.lastEventId);
  return { id: message.lastEventId && Number.isSafeInteger(id) ? id : null, type, data };
}

/**
 * An EventSource that survives server restarts. On any error it closes the source and opens a fresh one
 * after a growing delay, resuming with `?after=<last applied id>`; replayed frames are dropped by the cursor.
 */
export class ResumableEventStream {
  private source: EventSource | null = null;
  private cursor: ResumeCursor = null;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private stopped = false;

  constructor(
    private readonly baseUrl: string,
    private readonly callbacks: StreamCallbacks,
    private readonly options: StreamOptions,
  ) {}

  get lastEventId(): ResumeCursor {
    return this.cursor;
  }

  start(): void {
    this.stopped = false;
    this.callbacks.onConnectionChange("connecting");
    this.open();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.source?.close();
    this.source = null;
  }

  private open(): void {
    const create = this.options.createSource ?? ((url: string) => new EventSource(url, { withCredentials: true }));
    const source = create(resumeUrl(this.baseUrl, this.cursor));
    this.source = source;
    source.onopen = () => {
      this.attempt = 0;
      this.callbacks.onConnectionChange("live");
      this.callbacks.onOpen?.();
    };
    source.onerror = () => this.handleFailure(source);
    for (const type of [...this.options.eventTypes, "message"]) {
      source.addEventListener(type, (message) => this.handleFrame(type, message as MessageEvent<string>));
    }
  }

  private handleFrame(type: string, message: MessageEvent<string>): void {
    const step = advanceCursor(this.cursor, message.lastEventId);
    if (!step.isNew) return;
    this.cursor = step.cursor;
    this.callbacks.onEvent(parseFrame(type, message));
  }

  private handleFailure(source: EventSource): void {
    if (this.stopped || source !== this.source) return;
    source.close();
    this.source = null;
    this.callbacks.onConnectionChange("reconnecting");
    this.callbacks.onError?.();
    const delay = reconnectDelay(this.attempt, this.options.backoffMs ?? DEFAULT_BACKOFF);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.open();
    }, delay);
  }
}
