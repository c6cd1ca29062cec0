import { expect, test } from "./bureau";
import { ConsolePage, expectLive, SECRET_CARD, StagePage, text } from "./pages";

test("console and stage recover by themselves after the server restarts", async ({ page, context, bureau, caseFor }) => {
  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  const stage = new StagePage(await context.newPage(), SECRET_CARD.en);
  await stage.open(caseId);
  const stageMarker = await stage.loadMarker();

  await operator.selectRole("informant");
  await operator.ask("What is the safe combination?");
  await operator.expectAnswer("informant", "known");
  await expect(stage.retrieval()).toHaveAttribute("data-outcome", "own_memory");

  // Crash the server: both screens say so, and keep showing what they had.
  await bureau.kill();
  await expect(page.locator(".connection")).toHaveAttribute("data-state", "reconnecting");
  await expect(stage.page.locator(".connection")).toHaveAttribute("data-state", "reconnecting");
  await expect(operator.answer()).toContainText(SECRET_CARD.en);
  await expect(stage.retrieval()).toHaveAttribute("data-outcome", "own_memory");

  // Same port, same data directory: the dots go green again without a reload.
  await bureau.start();
  await expectLive(page, 20_000);
  await expectLive(stage.page, 20_000);
  await expect(page.getByTestId("case-id")).toHaveText(caseId);
  await expect(stage.retrieval()).toHaveAttribute("data-outcome", "own_memory");

  // The resumed streams carry new events: a publication shows up on both screens.
  const secretCard = operator.privateCards().locator(".card", { hasText: SECRET_CARD.en });
  await secretCard.getByRole("button", { name: new RegExp(text("en", "cards.publish")) }).click();
  await expect(operator.board().locator(".card", { hasText: SECRET_CARD.en })).toBeVisible();
  await expect(stage.page.getByTestId("stage-board")).toContainText(SECRET_CARD.en, { timeout: 1_500 });
  expect(await stage.loadMarker()).toBe(stageMarker);
});
