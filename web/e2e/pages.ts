import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Page } from "@playwright/test";
import { messages, type MessageKey, type UiLanguage } from "../src/i18n/strings";
import { expect } from "./bureau";

const WEB_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SCREENSHOT_DIR = join(WEB_DIR, "test-results", "screenshots");
const DOCS_SCREENSHOT_DIR = join(WEB_DIR, "..", "docs", "screenshots");

/** The UI string the app shows for `key` (tests find controls by their visible names, in either language). */
export function text(language: UiLanguage, key: MessageKey, params: Record<string, string | number> = {}): string {
  return messages[language][key].replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}

export async function useUiLanguage(page: Page, language: UiLanguage): Promise<void> {
  await page.addInitScript((value) => localStorage.setItem("bureau.uiLanguage", value), language);
}

export async function expectLive(page: Page, timeout = 10_000): Promise<void> {
  await expect(page.locator(".connection")).toHaveAttribute("data-state", "live", { timeout });
}

export class ConsolePage {
  constructor(
    readonly page: Page,
    readonly language: UiLanguage,
  ) {}

  async open(caseId: string): Promise<void> {
    await this.page.goto(`/operate/${caseId}`);
    await expect(this.page.getByTestId("case-id")).toHaveText(caseId);
    await expectLive(this.page);
  }

  async selectRole(role: "detective" | "informant" | "suspect"): Promise<void> {
    const button = this.page.locator(`.role-button--${role}`);
    await button.click();
    await expect(button).toHaveAttribute("aria-pressed", "true");
  }

  async ask(question: string): Promise<void> {
    await this.page.getByLabel(text(this.language, "ask.label"), { exact: true }).fill(question);
    await this.page.getByRole("button", { name: text(this.language, "ask.submit"), exact: true }).click();
  }

  /** Picks a preset chip (which fills the question box) and asks it. */
  async askPreset(question: string): Promise<void> {
    await this.page.getByRole("group", { name: text(this.language, "ask.presets") }).getByRole("button", { name: question, exact: true }).click();
    await expect(this.page.getByLabel(text(this.language, "ask.label"), { exact: true })).toHaveValue(question);
    await this.page.getByRole("button", { name: text(this.language, "ask.submit"), exact: true }).click();
  }

  answer() {
    return this.page.getByTestId("answer");
  }

  async expectAnswer(role: "detective" | "informant" | "suspect", certainty: "known" | "unknown"): Promise<void> {
    await expect(this.answer()).toHaveAttribute("data-certainty", certainty);
    await expect(this.answer()).toContainText(text(this.language, "answer.byRole", { role: text(this.language, `role.${role}`) }));
  }

  verdict() {
    return this.page.getByTestId("xray-verdict");
  }

  board() {
    return this.page.getByRole("region", { name: text(this.language, "board.heading") });
  }

  privateCards() {
    return this.page.locator(".private-cards");
  }

  matrixCell(role: string, factId: string) {
    return this.page.getByTestId(`matrix-${role}-${factId}`);
  }

  /** Publishes the selected role's private card that says `content`; returns the id of its board copy. */
  async publish(content: string): Promise<string> {
    const card = this.privateCards().locator(".card", { hasText: content });
    await card.getByRole("button", { name: new RegExp(text(this.language, "cards.publish")) }).click();
    const copy = this.board().locator(".card", { hasText: content });
    await expect(copy).toBeVisible();
    return (await copy.getAttribute("data-card-id")) ?? "";
  }

  /** Resets the case through the confirmation dialog and waits for the empty board. */
  async reset(): Promise<void> {
    await this.page.getByRole("button", { name: text(this.language, "console.reset") }).click();
    await this.page
      .getByRole("dialog", { name: text(this.language, "dialog.reset.title") })
      .getByRole("button", { name: text(this.language, "dialog.reset.confirm"), exact: true })
      .click();
    await expect(this.board()).toContainText(text(this.language, "board.empty"));
  }
}

/** The informant's secret card in safe-combination. Tests match the whole sentence: a bare "0427" also turns
 * up inside random card and case ids now and then. */
export const SECRET_CARD: Record<UiLanguage, string> = {
  en: "The safe combination is 0427.",
  zh: "保险柜的密码是0427。",
};

/** A stage page that records whether the secret ever reached the screen and which endpoints it called. */
export class StagePage {
  readonly apiCalls: string[] = [];

  constructor(
    readonly page: Page,
    private readonly secret: string,
  ) {
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith("/api/")) this.apiCalls.push(url.pathname);
    });
  }

  async open(caseId: string): Promise<void> {
    await this.page.addInitScript((secret) => {
      const state = window as unknown as { secretSeenAt: number | null; pageLoadMarker: string };
      state.secretSeenAt = null;
      state.pageLoadMarker = Math.random().toString(36);
      new MutationObserver(() => {
        if (state.secretSeenAt === null && document.body?.innerText.includes(secret)) state.secretSeenAt = Date.now();
      }).observe(document, { subtree: true, childList: true, characterData: true });
    }, this.secret);
    await this.page.goto(`/stage/${caseId}`);
    await expect(this.page.getByTestId("stage-tile-detective")).toBeVisible();
    await expectLive(this.page);
  }

  retrieval() {
    return this.page.getByTestId("stage-retrieval");
  }

  async secretSeen(): Promise<boolean> {
    return this.page.evaluate(() => (window as unknown as { secretSeenAt: number | null }).secretSeenAt !== null);
  }

  async loadMarker(): Promise<string> {
    return this.page.evaluate(() => (window as unknown as { pageLoadMarker: string }).pageLoadMarker);
  }
}

/** Opt-in (`UPDATE_DOCS_SCREENSHOTS=1`, see `make screenshots`): a plain test run never rewrites tracked files. */
const UPDATE_DOCS = process.env.UPDATE_DOCS_SCREENSHOTS === "1";

/** Saves a screenshot under test-results/screenshots; with `publish` and UPDATE_DOCS, copies it to docs/screenshots. */
export async function screenshot(page: Page, name: string, publish = false): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, animations: "disabled" });
  if (publish && UPDATE_DOCS) {
    mkdirSync(DOCS_SCREENSHOT_DIR, { recursive: true });
    copyFileSync(path, join(DOCS_SCREENSHOT_DIR, `${name}.png`));
  }
}
