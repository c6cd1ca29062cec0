import { expect, test } from "./bureau";
import { text } from "./pages";

// Raw server codes that have a label of their own: none may show in the policy log outside a row's Details.
const RAW_CODES = /\b(write_accepted|read_filtered|long_term_knowledge|operational_memory|informant|detective|suspect|bulletin_board)\b|\bok\b/;

test.describe("a Chinese browser", () => {
  test.use({ locale: "zh-CN" });

  test("gets the Chinese interface and a Chinese case by default; the policy log speaks Chinese too", async ({ page, request }) => {
    await page.goto("/");
    expect(await page.evaluate(() => navigator.languages)).toEqual(["zh-CN"]);
    await expect(page.getByRole("heading", { name: text("zh", "lobby.heading") })).toBeVisible();
    await expect(page.locator("html")).toHaveAttribute("lang", "zh-CN");
    await expect(page.getByRole("radio", { name: text("zh", "lang.zh") })).toBeChecked(); // the case language follows
    expect(await page.evaluate(() => localStorage.getItem("bureau.uiLanguage"))).toBeNull(); // nothing stored for it

    await page.getByRole("button", { name: text("zh", "lobby.start") }).click();
    await expect(page).toHaveURL(/\/operate\//);
    const caseId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    const created = (await (await request.get(`/api/cases/${caseId}`)).json()) as { case: { language: string } };
    expect(created.case.language).toBe("zh");

    const log = page.getByTestId("policy-log");
    const first = log.getByRole("listitem").last(); // the oldest: the scenario's cards, accepted
    await expect(first.getByTestId("policy-log-label")).toContainText(text("zh", "policyLog.action.write_accepted"));
    for (const label of await log.getByTestId("policy-log-label").allTextContents()) expect(label).not.toMatch(RAW_CODES);
    const details = first.locator("details");
    await details.locator("summary", { hasText: text("zh", "policyLog.details") }).click();
    await expect(details.locator("code")).toContainText("write_accepted · ok ·");

    // The switch still wins, and is remembered.
    await page.getByRole("button", { name: text("zh", "lang.en") }).click();
    await expect(first.getByTestId("policy-log-label")).toContainText(text("en", "policyLog.action.write_accepted"));
    await page.goto("/");
    await expect(page.getByRole("heading", { name: text("en", "lobby.heading") })).toBeVisible();
    await expect(page.getByRole("radio", { name: text("en", "lang.en") })).toBeChecked();
  });
});

test("an English browser (the pinned locale) gets the English interface", async ({ page }) => {
  await page.goto("/");
  expect(await page.evaluate(() => navigator.language)).toBe("en-US");
  await expect(page.getByRole("heading", { name: text("en", "lobby.heading") })).toBeVisible();
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await expect(page.getByRole("radio", { name: text("en", "lang.en") })).toBeChecked();
});
