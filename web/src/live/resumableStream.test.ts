import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { LiveEvent } from "../api/types";
import { reconnectDelay, ResumableEventStream, type ConnectionState } from "./resumableStream";

/** A scriptable stand-in for the browser's EventSource. */
class FakeEventSource {
  static instances: FakeEventSource[] = [];
  onopen: (() => void) | null = null;
  onerror: (() => void) | null = null;
  closed = false;
  private listeners = new Map<string, ((message: MessageEvent<string>) => void)[]>();

  constructor(readonly url: string) {
    FakeEventSource.instances.push(this);
  }

  addEventListener(type: string, listener: (message: MessageEvent<string>) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close() {
    this.closed = true;
  }

  open() {
    this.onopen?.();
  }

  fail() {
    this.onerror?.();
  }

  emit(type: string, id: string, data: unknown) {
    this.emitRaw(type, id, JSON.stringify(data));
  }

  emitRaw(type: string, id: string, data: string) {
    const message = new MessageEvent<string>(type, { data, lastEventId: id });
    this.listeners.get(type)?.forEach((listener) => listener(message));
  }
}

function latestSource(): FakeEventSource {
  const source = FakeEventSource.instances.at(-1);
  if (!source) throw new Error("no EventSource was created");
  return source;
}

describe("ResumableEventStream", () => {
  let events: LiveEvent[];
  let states: ConnectionState[];
  let opens: number;
  let stream: ResumableEventStream;

  beforeEach(() => {
    vi.useFakeTimers();
    FakeEventSource.instances = [];
    events = [];
    states = [];
    opens = 0;
    stream = new ResumableEventStream(
      "/api/cases/c1/events",
      { onEvent: (event) => events.push(event), onConnectionChange: (state) => states.push(state), onOpen: () => (opens += 1) },
      {
        eventTypes: ["memory.written", "case.reset"],
        createSource: (url) => new FakeEventSource(url) as unknown as EventSource,
        backoffMs: { initial: 100, max: 400 },
      },
    );
  });

  afterEach(() => {
    stream.stop();
    vi.useRealTimers();
  });

  it("connects without a cursor, reports live and delivers parsed frames", () => {
    stream.start();
    const source = latestSource();
    expect(source.url).toBe("/api/cases/c1/events");
    source.open();
    source.emit("memory.written", "5", { case_id: "c1", version: 2 });
    expect(states).toEqual(["connecting", "live"]);
    expect(opens).toBe(1);
    expect(events).toEqual([{ id: 5, type: "memory.written", data: { case_id: "c1", version: 2 } }]);
    expect(stream.lastEventId).toBe(5);
  });

  it("reconnects after an error with ?after=<last id> and drops replayed frames", () => {
    stream.start();
    const first = latestSource();
    first.open();
    first.emit("memory.written", "5", {});
    first.fail();
    expect(first.closed).toBe(true);
    expect(states.at(-1)).toBe("reconnecting");

    vi.advanceTimersByTime(100);
    const second = latestSource();
    expect(second).not.toBe(first);
    expect(second.url).toBe("/api/cases/c1/events?after=5");
    second.open();
    second.emit("memory.written", "5", {});
    second.emit("case.reset", "6", {});
    expect(events.map((event) => event.id)).toEqual([5, 6]);
    expect(states.at(-1)).toBe("live");
    expect(opens).toBe(2);
  });

  it("backs off exponentially while the server stays down, then resets after a successful open", () => {
    stream.start();
    latestSource().fail();
    vi.advanceTimersByTime(99);
    expect(FakeEventSource.instances).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.instances).toHaveLength(2);
    latestSource().fail();
    vi.advanceTimersByTime(200);
    expect(FakeEventSource.instances).toHaveLength(3);
    latestSource().open();
    latestSource().fail();
    vi.advanceTimersByTime(100);
    expect(FakeEventSource.instances).toHaveLength(4);
  });

  it("caps the delay and stays quiet after stop()", () => {
    expect([0, 1, 2, 3, 4].map((attempt) => reconnectDelay(attempt, { initial: 100, max: 400 }))).toEqual([100, 200, 400, 400, 400]);
    stream.start();
    latestSource().fail();
    stream.stop();
    vi.advanceTimersByTime(10_000);
    expect(FakeEventSource.instances).toHaveLength(1);
  });

  it("treats unreadable data as an empty payload", () => {
    stream.start();
    latestSource().emitRaw("case.reset", "8", "not json");
    expect(events).toEqual([{ id: 8, type: "case.reset", data: {} }]);
  });
});
