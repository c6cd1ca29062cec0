import { describe, expect, it } from "vitest";
import { card, snapshot } from "../test/fixtures";
import { buildCardIndex, deriveFactCell, deriveKnowledgeMatrix } from "./matrix";

const facts = snapshot().scenario.key_facts;
const combination = facts[0]!;
const alibi = facts[1]!;

function indexWithBoardCopy() {
  const snap = snapshot();
  snap.spaces.bulletin_board = [card({ id: "b1", space: "bulletin_board", topic: "safe_combination", source: { role: "informant", card_id: "i1" } })];
  return buildCardIndex(snap.spaces, {});
}

describe("who-knows-what matrix", () => {
  it("shows — for every fact of a role that was never asked", () => {
    const matrix = deriveKnowledgeMatrix(facts, {}, indexWithBoardCopy());
    expect(matrix.detective).toEqual({ combination: "not_asked", alibi: "not_asked" });
    expect(Object.keys(matrix)).toEqual(["detective", "informant", "suspect"]);
  });

  it("says own memory when the evidence is in the role's own space with that topic", () => {
    const matrix = deriveKnowledgeMatrix(facts, { informant: { certainty: "known", evidence: ["i1"] } }, indexWithBoardCopy());
    expect(matrix.informant).toEqual({ combination: "own_memory", alibi: "unknown" });
  });

  it("says board when the evidence is a board copy with that topic", () => {
    const matrix = deriveKnowledgeMatrix(facts, { detective: { certainty: "known", evidence: ["b1"] } }, indexWithBoardCopy());
    expect(matrix.detective).toEqual({ combination: "board", alibi: "unknown" });
  });

  it("says unknown for every fact when the last answer had no evidence", () => {
    expect(deriveFactCell("detective", combination, { certainty: "unknown", evidence: [] }, indexWithBoardCopy())).toBe("unknown");
  });

  it("prefers own memory over the board when both back the fact", () => {
    const index = buildCardIndex({ detective: [card({ id: "d9", space: "detective", topic: "safe_combination" })] }, { b1: { space: "bulletin_board", topic: "safe_combination" } });
    expect(deriveFactCell("detective", combination, { certainty: "known", evidence: ["b1", "d9"] }, index)).toBe("own_memory");
  });

  it("does not credit a role with another role's private card", () => {
    const index = buildCardIndex(snapshot().spaces, {});
    expect(deriveFactCell("detective", combination, { certainty: "known", evidence: ["i1"] }, index)).toBe("unknown");
  });

  it("resolves evidence cards that left the snapshot through the traced cards", () => {
    const index = buildCardIndex({}, { gone: { space: "suspect", topic: "alibi" } });
    expect(deriveFactCell("suspect", alibi, { certainty: "known", evidence: ["gone"] }, index)).toBe("own_memory");
    expect(deriveFactCell("suspect", alibi, { certainty: "known", evidence: ["missing"] }, index)).toBe("unknown");
  });
});
