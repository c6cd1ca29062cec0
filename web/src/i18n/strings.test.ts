import { describe, expect, it } from "vitest";
import { ROLES, BOARD, LIVE_EVENT_TYPES } from "../api/types";
import { en, messages, UI_LANGUAGES, zh, type MessageKey } from "./strings";
import { placeholdersOf, translate } from "./translate";

const keys = Object.keys(en) as MessageKey[];

describe("UI strings", () => {
  it("has every key in both English and Chinese, and nothing extra", () => {
    expect(Object.keys(zh).sort()).toEqual([...keys].sort());
    for (const language of UI_LANGUAGES) expect(Object.keys(messages[language])).toHaveLength(keys.length);
  });

  it("has no empty strings", () => {
    for (const language of UI_LANGUAGES) {
      for (const key of keys) expect(messages[language][key].trim(), `${language}:${key}`).not.toBe("");
    }
  });

  it("uses the same placeholders in both languages", () => {
    for (const key of keys) expect(placeholdersOf(zh[key]), key).toEqual(placeholdersOf(en[key]));
  });

  it("actually translates: Chinese differs from English except for language names and symbols", () => {
    const sameOnPurpose = new Set<MessageKey>(["lang.en", "lang.zh", "cell.not_asked", "whisper.counter", "card.label", "policyLog.row"]);
    for (const key of keys) {
      if (!sameOnPurpose.has(key)) expect(zh[key], key).not.toBe(en[key]);
    }
  });

  it("names every role and the board, and labels every X-ray outcome", () => {
    const required = [
      ...ROLES.map((role) => `role.${role}`),
      `space.${BOARD}`,
      ...["hit", "borderline_confirmed"].map((kind) => `kind.${kind}`),
      ...["below_threshold", "borderline_rejected", "derived_context", "filtered_unsafe", "duplicate", "expired", "failed_validation", "type_not_evidence", "owner_mismatch"].map((reason) => `reason.${reason}`),
    ];
    for (const key of required) expect(keys).toContain(key);
    expect(LIVE_EVENT_TYPES.length).toBeGreaterThan(0);
  });
});

describe("translate", () => {
  it("fills placeholders and leaves unknown ones visible", () => {
    expect(translate("en", "rail.privateCount", { n: 3 })).toBe("3 private cards");
    expect(translate("zh", "rail.privateCount", { n: 3 })).toBe("3 张私密卡片");
    expect(translate("en", "rail.privateCount")).toBe("{n} private cards");
  });

  it("builds the first half of the stage sentence in both languages", () => {
    expect(translate("en", "stage.searched", { role: "Detective", scopes: "its own memory + the board" })).toBe(
      "Detective searched its own memory + the board",
    );
    expect(translate("zh", "stage.searched", { role: "侦探", scopes: "自己的记忆和公告板" })).toBe("侦探搜索了自己的记忆和公告板");
  });

  it("writes Chinese the Chinese way: no spaces around names, full-width punctuation, no 密语 or 抹除", () => {
    for (const key of keys) {
      const text = zh[key];
      expect(text, key).not.toMatch(/\{role\} |\{scopes\} | \{role\}| \{scopes\}/);
      expect(text, key).not.toMatch(/[\u4e00-\u9fff][:,;?!]|[:,;?!][\u4e00-\u9fff]/); // ASCII punctuation next to Chinese
      expect(text, key).not.toMatch(/密语|抹除/);
    }
  });
});
