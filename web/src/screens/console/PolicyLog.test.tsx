import { cleanup, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../../api/client";
import type { PolicyDecision } from "../../api/types";
import { FixedLanguage } from "../../i18n/I18n";
import type { UiLanguage } from "../../i18n/strings";
import { renderWithI18n } from "../../test/render";
import { PolicyLog } from "./PolicyLog";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

function decision(id: number, fields: Partial<PolicyDecision>): PolicyDecision {
  return {
    id,
    created_at: "2026-12-02T04:00:00Z",
    action: "write_accepted",
    code: "ok",
    detail: "",
    memory_type: "long_term_knowledge",
    creator: "scenario",
    space: "informant",
    count: 1,
    ...fields,
  };
}

// Oldest first, as the server pages them; the log shows the newest first.
const DECISIONS: PolicyDecision[] = [
  decision(1, { count: 2 }),
  decision(2, { memory_type: "session", creator: "system", space: "detective" }),
  decision(3, { action: "write_rejected", code: "UNSAFE_INPUT", detail: "phone_number", creator: "operator" }),
  decision(4, {
    action: "write_rejected",
    code: "MEMORY_TYPE_FORBIDDEN",
    detail: "operator:audit_record:ordinary",
    memory_type: "audit_record",
    creator: "operator",
  }),
  decision(5, { action: "read_filtered", code: "owner_mismatch", memory_type: null, creator: null, space: "bulletin_board" }),
];

const LABELS: Record<UiLanguage, string[]> = {
  en: [
    "filtered on read: owner mismatch · – · – → Bulletin board ×1",
    "rejected: this writer may not write this type · audit record · operator → Informant ×1",
    "rejected: refused by the safety check (phone number) · long-term knowledge · operator → Informant ×1",
    "accepted · session · system → Detective ×1",
    "accepted · long-term knowledge · scenario → Informant ×2",
  ],
  zh: [
    "读取时过滤：归属不符 · – · – → 公告板 ×1",
    "已拒绝：该写入者不能写入此类型 · 审计记录 · 操作员 → 线人 ×1",
    "已拒绝：未通过安全检查（电话号码） · 长期知识 · 操作员 → 线人 ×1",
    "已接受 · 会话 · 系统 → 侦探 ×1",
    "已接受 · 长期知识 · 剧本 → 线人 ×2",
  ],
};

// Every server code in these rows whose label differs from it ("session", "system", "scenario" are their own
// English words): none may show outside "Details".
const RAW_CODES = /\b(ok|write_accepted|write_rejected|read_filtered|UNSAFE_INPUT|MEMORY_TYPE_FORBIDDEN|owner_mismatch|phone_number|long_term_knowledge|audit_record|informant|detective|bulletin_board)\b/;

describe.each<UiLanguage>(["en", "zh"])("<PolicyLog> (%s)", (language) => {
  it("shows each decision in words, with the raw codes only under Details", async () => {
    vi.spyOn(api, "policyDecisions").mockResolvedValue({ decisions: DECISIONS, next_after: null });
    renderWithI18n(
      <FixedLanguage language={language}>
        <PolicyLog caseId="c1" refreshKey="1" />
      </FixedLanguage>,
    );
    const log = await waitFor(() => screen.getByTestId("policy-log"));
    const rows = within(log).getAllByRole("listitem");
    expect(rows.map((row) => within(row).getByTestId("policy-log-label").textContent)).toEqual(LABELS[language]);
    for (const row of rows) {
      const details = row.querySelector("details");
      expect(details, "every row has its Details").not.toBeNull();
      expect(details?.open).toBe(false);
      expect(details?.querySelector("summary")?.textContent).toBe(language === "en" ? "Details" : "详情");
      const outside = [...row.childNodes].filter((node) => node !== details).map((node) => node.textContent ?? "");
      expect(outside.join(" "), "a code outside Details").not.toMatch(RAW_CODES);
    }
    // The codes themselves are still there for whoever opens Details.
    expect(rows.map((row) => row.querySelector("details code")?.textContent)).toEqual([
      "read_filtered · owner_mismatch ·  ·  → bulletin_board ×1",
      "write_rejected · MEMORY_TYPE_FORBIDDEN (operator:audit_record:ordinary) · audit_record · operator → informant ×1",
      "write_rejected · UNSAFE_INPUT (phone_number) · long_term_knowledge · operator → informant ×1",
      "write_accepted · ok · session · system → detective ×1",
      "write_accepted · ok · long_term_knowledge · scenario → informant ×2",
    ]);
  });
});
