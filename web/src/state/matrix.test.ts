import { describe, expect, it } from "vitest";
import { card, snapshot } from "../test/fixtures";
import type { RoleAnswer } from "./consoleState";
import { buildCardIndex, deriveFactCell, deriveKnowledgeMatrix } from "./matrix";

const facts = snapshot().scenario.key_facts;
const combination = facts[0]!;
const alibi = facts[1]!;
const known = (evidence: string[], question?: string): RoleAnswer => ({ certainty: "known", evidence, question });
const unknown = (question?: string): RoleAnswer => ({ certainty: "unknown", evidence: [], question });

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
    const matrix = deriveKnowledgeMatrix(facts, { informant: [known(["i1"], combination.question!)] }, indexWithBoardCopy());
    expect(matrix.informant).toEqual({ combination: "own_memory", alibi: "not_asked" });
  });

  it("says board when the evidence is a board copy with that topic", () => {
    const matrix = deriveKnowledgeMatrix(facts, { detective: [known(["b1"])] }, indexWithBoardCopy());
    expect(matrix.detective).toEqual({ combination: "board", alibi: "not_asked" });
  });

  it("never counts an uncertain answer as knowing, though it quotes the closest card", () => {
    const uncertain: RoleAnswer = { certainty: "uncertain", evidence: ["b1"], question: combination.question! };
    expect(deriveFactCell("detective", combination, [uncertain], indexWithBoardCopy())).toBe("uncertain");
    expect(deriveFactCell("detective", alibi, [{ ...uncertain, question: "something else?" }], indexWithBoardCopy())).toBe("not_asked");
  });

  it("says unknown only for the fact whose own question got no evidence", () => {
    const answers = [unknown(combination.question!)];
    expect(deriveFactCell("detective", combination, answers, indexWithBoardCopy())).toBe("unknown");
    expect(deriveFactCell("detective", alibi, answers, indexWithBoardCopy())).toBe("not_asked");
  });

  it("never concludes unknown from an answer whose question this console did not see", () => {
    expect(deriveFactCell("detective", combination, [unknown()], indexWithBoardCopy())).toBe("not_asked");
  });

  it("lets the newest answer that speaks to a fact win, and ignores answers about other facts", () => {
    const index = indexWithBoardCopy();
    const answers = [unknown(combination.question!), known(["b1"], combination.question!), unknown(alibi.question!)];
    expect(deriveFactCell("detective", combination, answers, index)).toBe("board");
    expect(deriveFactCell("detective", alibi, answers, index)).toBe("unknown");
  });

  it("prefers own memory over the board when both back the fact", () => {
    const index = buildCardIndex({ detective: [card({ id: "d9", space: "detective", topic: "safe_combination" })] }, { b1: { space: "bulletin_board", topic: "safe_combination" } });
    expect(deriveFactCell("detective", combination, [known(["b1", "d9"])], index)).toBe("own_memory");
  });

  it("does not credit a role with another role's private card", () => {
    const index = buildCardIndex(snapshot().spaces, {});
    expect(deriveFactCell("detective", combination, [known(["i1"], combination.question!)], index)).toBe("unknown");
  });

  it("resolves evidence cards that left the snapshot through the traced cards", () => {
    const index = buildCardIndex({}, { gone: { space: "suspect", topic: "alibi" } });
    expect(deriveFactCell("suspect", alibi, [known(["gone"])], index)).toBe("own_memory");
    expect(deriveFactCell("suspect", alibi, [known(["missing"])], index)).toBe("not_asked");
  });
});
