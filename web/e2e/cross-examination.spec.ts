import { expect, test } from "./bureau";
import { ConsolePage, StagePage, text } from "./pages";

test("a cross-examination mixing two roles' secrets is sealed: the operator sees it, the stage only hears of it", async ({
  browser,
  page,
  caseFor,
}) => {
  const caseId = await caseFor("safe-combination", "en");
  const stagePage = await browser.newPage();
  const marker = `zq${Math.random().toString(36).replace(/[^a-z]/g, "").slice(0, 10)}`;
  const stage = new StagePage(stagePage, marker);
  await stage.open(caseId);

  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  for (const [role, room] of [
    ["informant", "cellar"],
    ["suspect", "attic"],
  ] as const) {
    await operator.selectRole(role);
    await page.getByLabel(text("en", "whisper.label")).fill(`Marker ${marker} hides in the ${room}.`);
    await page.getByRole("button", { name: text("en", "whisper.submit"), exact: true }).click();
    await expect(operator.privateCards().locator(".card", { hasText: room })).toBeVisible();
  }

  await page.getByLabel(text("en", "cross.question")).fill(`Where does marker ${marker} hide?`);
  await page.getByRole("button", { name: text("en", "cross.submit"), exact: true }).click();
  const sealed = page.getByTestId("sealed-conclusion");
  await expect(sealed).toContainText(text("en", "cross.sealed"));
  await expect(sealed).toContainText("cellar");
  await expect(sealed).toContainText("attic");
  await expect(sealed).toContainText(text("en", "cross.audience", { audience: "sealed" }));

  const announced = stagePage.getByTestId("stage-conclusion");
  await expect(announced).toHaveText(new RegExp(text("en", "stage.sealed")));
  await expect(announced).toHaveAttribute("data-sealed", "true");
  expect(await stage.secretSeen()).toBe(false);
  await expect(stagePage.locator("body")).not.toContainText("cellar");
  await stagePage.close();
});
