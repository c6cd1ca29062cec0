import { expect, test } from "./bureau";
import { ConsolePage, SECRET_CARD, StagePage, text } from "./pages";

test("reset asks first, then starts the scenario over on console and stage", async ({ page, context, caseFor }) => {
  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  const stage = new StagePage(await context.newPage(), SECRET_CARD.en);
  await stage.open(caseId);

  await operator.selectRole("informant");
  await operator.ask("What is the safe combination?");
  await operator.expectAnswer("informant", "known");
  await operator.privateCards().locator(".card", { hasText: SECRET_CARD.en }).getByRole("button", { name: /Publish to board/ }).click();
  await expect(stage.page.getByTestId("stage-board")).toContainText(SECRET_CARD.en);

  const resetButton = page.getByRole("button", { name: text("en", "console.reset") });
  const dialog = page.getByRole("dialog", { name: text("en", "dialog.reset.title") });
  await resetButton.click();
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole("button", { name: text("en", "common.cancel") })).toBeFocused();
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await expect(operator.board()).toContainText(SECRET_CARD.en);

  await resetButton.click();
  await dialog.getByRole("button", { name: text("en", "dialog.reset.confirm"), exact: true }).click();
  await expect(operator.board()).toContainText(text("en", "board.empty"));
  await expect(page.getByText(text("en", "answer.none"))).toBeVisible();
  await expect(operator.matrixCell("informant", "combination")).toHaveAttribute("data-cell", "not_asked");
  await expect(stage.page.getByText(text("en", "stage.boardEmpty"))).toBeVisible();
  await expect(stage.retrieval()).toHaveText(text("en", "stage.waiting"));
});

test("erase asks first, returns to the lobby, forgets the case and ends the stage", async ({ page, context, caseFor }) => {
  const caseId = await caseFor("mole", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  const stage = new StagePage(await context.newPage(), SECRET_CARD.en);
  await stage.open(caseId);

  // The lobby lists the case just opened, and drops remembered cases the server no longer knows.
  await page.evaluate(() => {
    const recent = JSON.parse(localStorage.getItem("bureau.recentCases") ?? "[]") as unknown[];
    recent.push({ id: "no-such-case", title: "Gone", language: "en", openedAt: "2026-01-01T00:00:00Z" });
    localStorage.setItem("bureau.recentCases", JSON.stringify(recent));
  });
  await page.goto("/");
  const recent = page.getByRole("region", { name: text("en", "lobby.recent") });
  await expect(recent).toContainText(caseId);
  await expect(recent).not.toContainText("no-such-case");
  await recent.getByRole("link", { name: text("en", "lobby.openConsole") }).first().click();
  await expect(page.getByTestId("case-id")).toHaveText(caseId);

  await page.getByRole("button", { name: text("en", "console.erase") }).click();
  const dialog = page.getByRole("dialog", { name: text("en", "dialog.erase.title") });
  await dialog.getByRole("button", { name: text("en", "dialog.erase.confirm") }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByRole("region", { name: text("en", "lobby.recent") })).not.toContainText(caseId);
  await expect(stage.page.locator(".stage__ended")).toBeVisible();
  // An ended case has no stream to resume: the projector says so, instead of "reconnecting" for ever.
  await expect(stage.page.locator("[data-state]").first()).toHaveAttribute("data-state", "ended");
});
