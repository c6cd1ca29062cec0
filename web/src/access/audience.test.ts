import { describe, expect, it } from "vitest";
import { audienceSatisfies, needsPasscode, OPEN_SESSION } from "./audience";

describe("audience lattice", () => {
  it("lets an operator session open operator and stage screens", () => {
    expect(audienceSatisfies("operator", "operator")).toBe(true);
    expect(audienceSatisfies("operator", "stage")).toBe(true);
  });

  it("lets a stage session open only the stage", () => {
    expect(audienceSatisfies("stage", "stage")).toBe(true);
    expect(audienceSatisfies("stage", "operator")).toBe(false);
  });

  it("lets no session open nothing", () => {
    expect(audienceSatisfies(null, "stage")).toBe(false);
  });
});

describe("needsPasscode", () => {
  it("never asks when the server runs open, unless a call was refused", () => {
    expect(needsPasscode(OPEN_SESSION, "operator", false)).toBe(false);
    expect(needsPasscode(OPEN_SESSION, "operator", true)).toBe(true);
  });

  it("asks when passcodes are on and the session is missing or too weak", () => {
    const locked = { audience: null, csrf_token: null, passcodes_enabled: true };
    expect(needsPasscode(locked, "stage", false)).toBe(true);
    expect(needsPasscode({ ...locked, audience: "stage" }, "operator", false)).toBe(true);
    expect(needsPasscode({ ...locked, audience: "stage" }, "stage", false)).toBe(false);
    expect(needsPasscode({ ...locked, audience: "operator", csrf_token: "t" }, "operator", false)).toBe(false);
  });
});
