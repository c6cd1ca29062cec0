import type { Browser, Page } from "@playwright/test";
import { expectNoViolations } from "./axe";
import { expect, test } from "./bureau";
import { ConsolePage, expectLive, text } from "./pages";

const OPERATOR_CODE = "operator-code-4711";
const STAGE_CODE = "stage-code-0815";

test.use({ bureauEnv: { BUREAU_OPERATOR_PASSCODE: OPERATOR_CODE, BUREAU_STAGE_PASSCODE: STAGE_CODE } });
// The throttle counts failures per client for minutes, so the test that trips it runs last.
test.describe.configure({ mode: "serial" });

async function caseAsOperator(browser: Browser, baseURL: string): Promise<string> {
  const context = await browser.newContext({ baseURL });
  const signIn = await context.request.post("/api/session", { headers: { "X-Bureau-Passcode": OPERATOR_CODE } });
  expect(signIn.status()).toBe(204);
  const csrf = signIn.headers()["x-csrf-token"] ?? "";
  const created = await context.request.post("/api/cases", {
    data: { scenario_id: "safe-combination", language: "en" },
    headers: { "X-CSRF-Token": csrf },
  });
  expect(created.status()).toBe(201);
  const { case: info } = (await created.json()) as { case: { id: string } };
  await context.close();
  return info.id;
}

async function enterPasscode(page: Page, code: string): Promise<void> {
  await page.getByLabel(text("en", "passcode.label")).fill(code);
  await page.getByRole("button", { name: text("en", "passcode.submit") }).click();
}

test("the operator signs in, plays with CSRF-protected writes, and signs out", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByRole("heading", { name: text("en", "passcode.heading") })).toBeVisible();
  await expect(page.getByText(text("en", "passcode.operatorIntro"))).toBeVisible();
  await expectNoViolations(page, "passcode screen");

  await enterPasscode(page, "not-the-code");
  await expect(page.getByRole("alert")).toHaveText(text("en", "passcode.wrong"));

  await enterPasscode(page, OPERATOR_CODE);
  await expect(page.getByRole("heading", { name: text("en", "lobby.heading") })).toBeVisible();
  await page.getByRole("radio", { name: /safe-combination/ }).check();
  await page.getByRole("button", { name: text("en", "lobby.start") }).click();
  await expect(page).toHaveURL(/\/operate\//);
  await expectLive(page);

  const operator = new ConsolePage(page, "en");
  await operator.selectRole("informant");
  await operator.ask("What is the safe combination?");
  await operator.expectAnswer("informant", "known");

  await page.getByRole("button", { name: text("en", "console.signOut") }).click();
  await expect(page.getByRole("heading", { name: text("en", "passcode.heading") })).toBeVisible();
});

test("the stage passcode opens the stage but not the console", async ({ browser, bureau }) => {
  const caseId = await caseAsOperator(browser, bureau.baseURL);
  const context = await browser.newContext({ baseURL: bureau.baseURL, viewport: { width: 1920, height: 1080 } });
  const page = await context.newPage();

  await page.goto(`/stage/${caseId}`);
  await expect(page.getByText(text("en", "passcode.stageIntro"))).toBeVisible();
  await enterPasscode(page, STAGE_CODE);
  await expect(page.getByTestId("stage-tile-detective")).toBeVisible();
  await expectLive(page);
  await expect(page.getByTestId("stage-retrieval")).toHaveText(text("en", "stage.waiting"));

  await page.goto(`/operate/${caseId}`);
  await expect(page.getByText(text("en", "passcode.insufficient"))).toBeVisible();
  await expect(page.getByTestId("case-id")).toHaveCount(0);
  await context.close();
});

test("repeated wrong passcodes are throttled with a visible countdown", async ({ page }) => {
  await page.goto("/");
  const status = page.locator("#passcode-status");
  const throttled = /^Too many attempts, retry in \d+ s\.$/;
  for (let attempt = 0; attempt < 8; attempt += 1) {
    await enterPasscode(page, `wrong-${attempt}`);
    await expect(status).toHaveText(new RegExp(`${text("en", "passcode.wrong")}|${throttled.source.slice(1, -1)}`));
    if (throttled.test((await status.textContent()) ?? "")) break;
  }
  await expect(status).toHaveText(throttled);
  await page.getByLabel(text("en", "passcode.label")).fill(OPERATOR_CODE);
  await expect(page.getByRole("button", { name: text("en", "passcode.submit") })).toBeDisabled();
});
