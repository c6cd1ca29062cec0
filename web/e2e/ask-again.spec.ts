import type { Page } from "@playwright/test";
import type { UiLanguage } from "../src/i18n/strings";
import { expect, test } from "./bureau";
import { ConsolePage, SECRET_CARD, StagePage, text } from "./pages";

/** Issue #9's crash: after the informant's card is published, asking the informant again returns a trace whose
 * board copy is a `duplicate` miss. The X-ray must draw it as a labelled duplicate (in both interface languages),
 * and the console must never go blank, however often the game is played through, reset and played again. */

const QUESTION = "What is the safe combination?";
const WHISPER = "The night guard leaves the gallery at ten past eleven.";

/** Everything that would blank the console or the stage: uncaught errors and React's error log. */
function recordCrashes(page: Page): string[] {
  const crashes: string[] = [];
  page.on("pageerror", (error) => crashes.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") crashes.push(`console.error: ${message.text()}`);
  });
  return crashes;
}

async function switchUiLanguage(page: Page, language: UiLanguage): Promise<void> {
  const current: UiLanguage = language === "en" ? "zh" : "en";
  const group = page.getByRole("group", { name: text(current, "ui.language") });
  await group.getByRole("button", { name: text(current, language === "en" ? "lang.en" : "lang.zh"), exact: true }).click();
  await expect(page.getByRole("group", { name: text(language, "ui.language") })).toBeVisible();
}

/** The console is on screen, not the error boundary's notice. */
async function expectConsoleAlive(page: Page): Promise<void> {
  await expect(page.getByTestId("crash-notice")).toHaveCount(0);
  await expect(page.getByTestId("case-id")).toBeVisible();
}

test("four acts, then the informant asked again after publishing and after a reset: a labelled duplicate, never a blank console", async ({
  page,
  context,
  caseFor,
}) => {
  const crashes = recordCrashes(page);
  const secret = SECRET_CARD.en;
  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  const stage = new StagePage(await context.newPage(), secret);
  const stageCrashes = recordCrashes(stage.page);
  await stage.open(caseId);

  // Act 1: a whisper lands in the informant's private memory only; the stage sees a count, never the text.
  await operator.selectRole("informant");
  await page.getByLabel(text("en", "whisper.label")).fill(WHISPER);
  await page.getByRole("button", { name: text("en", "whisper.submit"), exact: true }).click();
  await expect(operator.privateCards().locator(".card", { hasText: WHISPER })).toBeVisible();
  await expect(operator.board()).toContainText(text("en", "board.empty"));

  // Act 2: the detective does not know the combination: its own space and the board hold nothing relevant.
  await operator.selectRole("detective");
  await operator.ask(QUESTION);
  await operator.expectAnswer("detective", "unknown");
  await expect(operator.verdict()).toHaveAttribute("data-verdict", "nothing_found");

  // Act 3: the informant, who holds the card, knows it from its own memory.
  await operator.selectRole("informant");
  await operator.ask(QUESTION);
  await operator.expectAnswer("informant", "known");
  const secretCard = operator.privateCards().locator(".card", { hasText: secret });
  await expect(secretCard).toHaveAttribute("data-cited", "true");
  const ownCardId = (await secretCard.getAttribute("data-card-id")) ?? "";
  await expect(page.getByTestId("xray-lane-bulletin_board").locator("[data-card-id]")).toHaveCount(0);

  // Act 4: publish the private card; the detective now knows, from the board copy.
  const copyId = await operator.publish(secret);
  expect(copyId).not.toBe(ownCardId);
  await expect(stage.page.getByTestId("stage-board")).toContainText(secret);
  await operator.selectRole("detective");
  await operator.ask(QUESTION);
  await operator.expectAnswer("detective", "known");
  await expect(operator.verdict()).toContainText(text("en", "xray.verdict.board"));
  await expect(operator.answer().locator(".cite")).toHaveAttribute("data-card-id", copyId);

  // The second move: the informant again. Its own card is the hit; the board copy is a labelled duplicate.
  await operator.selectRole("informant");
  await operator.ask(QUESTION);
  await operator.expectAnswer("informant", "known");
  await expect(operator.answer().locator(".cite")).toHaveAttribute("data-card-id", ownCardId);
  await expect(page.getByTestId("xray-lane-informant").locator(`[data-card-id="${ownCardId}"]`)).toHaveAttribute("data-kind", "hit");
  const duplicate = page.getByTestId("xray-lane-bulletin_board").locator(`[data-card-id="${copyId}"]`);
  await expect(duplicate).toHaveAttribute("data-kind", "duplicate");
  await expect(duplicate.locator(".xray-mark__label")).toContainText(text("en", "reason.duplicate"));
  await expect(page.getByTestId("xray-legend").locator('[data-entry="duplicate"]')).toHaveText(`■ ${text("en", "xray.legend.duplicate")}`);
  await expectConsoleAlive(page);

  // The same X-ray in Chinese: the label switches with the interface, the console stays up.
  await switchUiLanguage(page, "zh");
  await expect(duplicate).toHaveAttribute("data-kind", "duplicate");
  await expect(duplicate.locator(".xray-mark__label")).toContainText(text("zh", "reason.duplicate"));
  await expect(page.getByTestId("xray-legend").locator('[data-entry="duplicate"]')).toHaveText(`■ ${text("zh", "xray.legend.duplicate")}`);
  await expect(page.getByTestId("xray")).not.toContainText(text("en", "reason.duplicate"));
  await expectConsoleAlive(page);
  await switchUiLanguage(page, "en");

  // Reset: the board is empty again, so the informant's answer has no duplicate at all.
  await operator.reset();
  await expect(operator.privateCards()).not.toContainText(WHISPER);
  await operator.ask(QUESTION);
  await operator.expectAnswer("informant", "known");
  const restoredCard = operator.privateCards().locator(".card", { hasText: secret });
  await expect(restoredCard).toHaveAttribute("data-cited", "true");
  await expect(page.getByTestId("xray-lane-bulletin_board").locator("[data-card-id]")).toHaveCount(0);
  await expect(page.getByTestId("xray-legend").locator('[data-entry="duplicate"]')).toHaveCount(0);

  // Publish again after the reset and ask once more: a new copy, labelled a duplicate like the first one.
  const newCopyId = await operator.publish(secret);
  expect(newCopyId).not.toBe(copyId);
  await operator.ask(QUESTION);
  await expect(page.getByTestId("xray-lane-bulletin_board").locator(`[data-card-id="${newCopyId}"]`)).toHaveAttribute("data-kind", "duplicate");
  await operator.expectAnswer("informant", "known");

  // A reload mid-game shows the same X-ray from the case record, in the language chosen last.
  await switchUiLanguage(page, "zh");
  await page.reload();
  const reloadedDuplicate = page.getByTestId("xray-lane-bulletin_board").locator(`[data-card-id="${newCopyId}"]`);
  await expect(reloadedDuplicate).toHaveAttribute("data-kind", "duplicate");
  await expect(reloadedDuplicate.locator(".xray-mark__label")).toContainText(text("zh", "reason.duplicate"));
  await expectConsoleAlive(page);

  // The stage followed along and never showed the whispered text.
  await expect(stage.page.getByTestId("stage-board")).toContainText(secret);
  await expect(stage.page.locator("body")).not.toContainText(WHISPER);
  expect(crashes).toEqual([]);
  expect(stageCrashes).toEqual([]);
});
