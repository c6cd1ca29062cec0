import { expectNoViolations } from "./axe";
import { expect, test } from "./bureau";
import { ConsolePage, SECRET_CARD, StagePage } from "./pages";

test("lobby, console (with an X-ray and a board) and stage pass axe WCAG 2.1 AA", async ({ page, context, caseFor }) => {
  // Entry animations fade from transparent; axe would measure contrast mid-fade.
  await page.emulateMedia({ reducedMotion: "reduce" });
  await page.goto("/");
  await expect(page.getByRole("radio", { name: /safe-combination/ })).toBeVisible();
  await expectNoViolations(page, "lobby");

  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  await operator.selectRole("informant");
  await operator.ask("What is the safe combination?");
  await operator.expectAnswer("informant", "known");
  await operator.privateCards().locator(".card", { hasText: SECRET_CARD.en }).getByRole("button", { name: /Publish to board/ }).click();
  await expect(operator.board()).toContainText(SECRET_CARD.en);
  await expectNoViolations(page, "console");

  const stage = new StagePage(await context.newPage(), "never-shown");
  await stage.page.emulateMedia({ reducedMotion: "reduce" });
  await stage.open(caseId);
  await expect(stage.retrieval()).toHaveAttribute("data-outcome", "own_memory");
  await expectNoViolations(stage.page, "stage");
});

test("the console can be driven from the keyboard", async ({ page, caseFor }) => {
  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);

  await page.keyboard.press("Tab");
  await expect(page.getByRole("link", { name: "Skip to content" })).toBeFocused();
  await page.locator(".role-button--informant").focus();
  await page.keyboard.press("Enter");
  await expect(page.locator(".role-button--informant")).toHaveAttribute("aria-pressed", "true");
  await page.getByLabel("Question", { exact: true }).focus();
  await page.keyboard.type("What is the safe combination?");
  await page.keyboard.press("Enter");
  await operator.expectAnswer("informant", "known");
});
