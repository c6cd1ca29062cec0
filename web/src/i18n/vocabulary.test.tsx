import { cleanup, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import {
  certaintyValues,
  createdByValues,
  fallbackReasonValues,
  interrogationResponderValues,
  kindValues,
  knowledgeDetectiveValues,
  memoryTypeValues,
  policyActionValues,
  policyCodeValues,
  trustValues,
} from "../api/schema";
import { HIT_STATUSES, MISS_REASONS, ROLES, type StageRetrieval } from "../api/types";
import { reasonText, MemoryXray } from "../screens/console/MemoryXray";
import { RetrievalSentence } from "../screens/stage/RetrievalSentence";
import { hit, miss, trace } from "../test/fixtures";
import { renderWithI18n } from "../test/render";
import { FixedLanguage } from "./I18n";
import { messages, type MessageKey, type UiLanguage } from "./strings";
import { translate } from "./translate";

afterEach(cleanup);

const LANGUAGES: UiLanguage[] = ["en", "zh"];
// Context, never evidence: the X-ray folds these into one labelled group instead of drawing a mark.
const CONTEXT_REASONS = new Set(["derived_context", "type_not_evidence"]);

/** Every value the server's enums can send (from the generated client), walked in both languages. */
describe.each(LANGUAGES)("every server enum value has words (%s)", (language) => {
  const has = (key: string) => key in messages[language] && messages[language][key as MessageKey].trim() !== "";

  it("has a label for every role, outcome, certainty, responder, fallback, card vocabulary, matrix cell, policy action and policy code", () => {
    const keys = [
      ...ROLES.map((role) => `role.${role}`),
      ...HIT_STATUSES.map((status) => `kind.${status}`),
      ...MISS_REASONS.map((reason) => `reason.${reason}`),
      ...certaintyValues.map((certainty) => `certainty.${certainty}`),
      ...interrogationResponderValues.map((mode) => `mode.${mode}`),
      ...fallbackReasonValues.map((reason) => `fallback.${reason}`),
      ...kindValues.map((kind) => `cardKind.${kind}`),
      ...memoryTypeValues.map((type) => `memoryType.${type}`),
      ...trustValues.map((trust) => `trust.${trust}`),
      ...createdByValues.map((creator) => `createdBy.${creator}`),
      ...knowledgeDetectiveValues.map((cell) => `cell.${cell}`),
      ...policyActionValues.map((action) => `policyLog.action.${action}`),
      ...policyCodeValues.map((code) => `policyLog.code.${code}`),
    ];
    expect(keys.filter((key) => !has(key))).toEqual([]);
  });

  it("draws every hit status and miss reason in the console X-ray, with its label", () => {
    const drawn = MISS_REASONS.filter((reason) => !CONTEXT_REASONS.has(reason));
    const candidates = trace({
      hits: HIT_STATUSES.map((status, index) => ({ ...hit(`h-${status}`, "detective", 0.9 - index / 10), status })),
      misses: MISS_REASONS.map((reason, index) => miss(`m-${reason}`, "bulletin_board", 0.3 - index / 50, reason)),
    });
    renderWithI18n(
      <FixedLanguage language={language}>
        <MemoryXray role="detective" trace={candidates} />
      </FixedLanguage>,
    );
    const xray = screen.getByTestId("xray");
    for (const status of HIT_STATUSES) {
      expect(xray.querySelector(`[data-card-id="h-${status}"]`)?.getAttribute("data-kind"), status).toBe(status);
    }
    const t = (key: MessageKey) => translate(language, key);
    for (const reason of drawn) {
      const mark = xray.querySelector(`[data-card-id="m-${reason}"]`);
      expect(mark, reason).not.toBeNull();
      expect(mark?.querySelector("title")?.textContent, reason).toContain(reasonText(t, reason));
    }
    expect(screen.getAllByTestId("xray-context")).toHaveLength(1);
  });

  it("says every role's retrieval with every verdict on the stage", () => {
    for (const role of ROLES) {
      for (const verdict of certaintyValues) {
        const retrieval: StageRetrieval = {
          role,
          searched_scopes: [role, "bulletin_board"],
          public_hits: verdict === "known" ? [{ card_id: "b1", score: 0.8 }] : [],
          private_hit_count: 0,
          verdict,
          conflicting: false,
          duration_ms: 12,
        };
        renderWithI18n(
          <FixedLanguage language={language}>
            <RetrievalSentence retrieval={retrieval} />
          </FixedLanguage>,
        );
        const sentence = within(screen.getByTestId("stage-retrieval"));
        expect(sentence.getByText(new RegExp(messages[language][`role.${role}` as MessageKey]))).toBeTruthy();
        cleanup();
      }
    }
  });
});
