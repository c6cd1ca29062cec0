import { describe, expect, it } from "vitest";
import { advanceCursor, parseEventId, resumeUrl } from "./cursor";

describe("resume cursor", () => {
  it("starts empty and advances to each newer id", () => {
    let step = advanceCursor(null, "3");
    expect(step).toEqual({ cursor: 3, isNew: true });
    step = advanceCursor(step.cursor, "7");
    expect(step).toEqual({ cursor: 7, isNew: true });
  });

  it("drops replayed and duplicate frames without moving back", () => {
    expect(advanceCursor(7, "7")).toEqual({ cursor: 7, isNew: false });
    expect(advanceCursor(7, "5")).toEqual({ cursor: 7, isNew: false });
  });

  it("applies frames without a usable id but keeps the cursor", () => {
    expect(advanceCursor(7, "")).toEqual({ cursor: 7, isNew: true });
    expect(advanceCursor(7, "abc")).toEqual({ cursor: 7, isNew: true });
    expect(advanceCursor(null, undefined)).toEqual({ cursor: null, isNew: true });
  });

  it("parses only non-negative safe integers", () => {
    expect(parseEventId("12")).toBe(12);
    expect(parseEventId(" 4 ")).toBe(4);
    expect(parseEventId("-1")).toBeNull();
    expect(parseEventId("1.5")).toBeNull();
    expect(parseEventId("99999999999999999999")).toBeNull();
    expect(parseEventId(null)).toBeNull();
  });

  it("builds the resume url with ?after= only once there is a cursor", () => {
    expect(resumeUrl("/api/cases/c1/events", null)).toBe("/api/cases/c1/events");
    expect(resumeUrl("/api/cases/c1/events", 0)).toBe("/api/cases/c1/events?after=0");
    expect(resumeUrl("/api/cases/c1/events?x=1", 9)).toBe("/api/cases/c1/events?x=1&after=9");
  });
});
