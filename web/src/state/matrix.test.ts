import { describe, expect, it } from "vitest";
import { snapshot } from "../test/fixtures";
import { knowledgeMatrix } from "./matrix";

const facts = snapshot().scenario.key_facts;

describe("who-knows-what matrix", () => {
  it("shows — for every fact no answer spoke to yet", () => {
    const matrix = knowledgeMatrix(facts, {});
    expect(matrix.detective).toEqual({ combination: "not_asked", alibi: "not_asked" });
    expect(Object.keys(matrix)).toEqual(["detective", "informant", "suspect"]);
    expect(knowledgeMatrix(facts, undefined).suspect).toEqual({ combination: "not_asked", alibi: "not_asked" });
  });

  it("draws the cells the server keeps with the case, unknown and conflicting included", () => {
    const matrix = knowledgeMatrix(facts, { detective: { combination: "unknown", alibi: "conflicting" }, informant: { combination: "own_memory" } });
    expect(matrix.detective).toEqual({ combination: "unknown", alibi: "conflicting" });
    expect(matrix.informant).toEqual({ combination: "own_memory", alibi: "not_asked" });
  });

  it("treats a cell it does not know as not asked", () => {
    const matrix = knowledgeMatrix(facts, { detective: { combination: "maybe" as never } });
    expect(matrix.detective.combination).toBe("not_asked");
  });
});
