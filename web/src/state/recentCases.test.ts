import { beforeEach, describe, expect, it } from "vitest";
import { forgetCase, loadRecentCases, rememberCase, type RecentCase } from "./recentCases";

const entry = (id: string): RecentCase => ({ id, title: `Case ${id}`, language: "en", openedAt: "2026-11-29T12:00:00Z" });

describe("recent cases", () => {
  beforeEach(() => localStorage.clear());

  it("remembers most recent first without duplicates, capped at 8", () => {
    for (const id of ["a", "b", "c", "a"]) rememberCase(entry(id));
    expect(loadRecentCases().map((known) => known.id)).toEqual(["a", "c", "b"]);
    for (let index = 0; index < 10; index += 1) rememberCase(entry(`x${index}`));
    expect(loadRecentCases()).toHaveLength(8);
  });

  it("forgets a case", () => {
    rememberCase(entry("a"));
    rememberCase(entry("b"));
    forgetCase("a");
    expect(loadRecentCases().map((known) => known.id)).toEqual(["b"]);
  });

  it("survives garbage in storage", () => {
    localStorage.setItem("bureau.recentCases", "{not json");
    expect(loadRecentCases()).toEqual([]);
    localStorage.setItem("bureau.recentCases", JSON.stringify([{ id: "ok" }, 4, null, { title: "no id" }]));
    expect(loadRecentCases().map((known) => known.id)).toEqual(["ok"]);
  });
});
