import type { UiLanguage } from "../src/i18n/strings";
import { expect, test } from "./bureau";
import { ConsolePage, screenshot, SECRET_CARD, StagePage, text, useUiLanguage } from "./pages";

/** The stage must catch up within about a second of the console seeing the result. */
const STAGE_LAG_MS = 1_500;

/** The scenario's first preset question, as shipped in each language. */
const QUESTIONS: Record<UiLanguage, string> = {
  en: "What is the safe combination?",
  zh: "保险柜的密码是多少？",
};

for (const language of ["en", "zh"] as const) {
  test(`four acts of safe-combination (${language}), with the stage following live`, async ({ page, context }) => {
    const secret = SECRET_CARD[language];
    await useUiLanguage(page, language);
    const operator = new ConsolePage(page, language);

    // Start the case from the lobby, in the case language.
    await page.goto("/");
    await page.getByRole("radio", { name: text(language, language === "en" ? "lang.en" : "lang.zh"), exact: true }).check();
    await page.getByRole("radio", { name: /safe-combination/ }).check();
    const publish = language === "en"; // copy this step's screenshots to docs/screenshots
    await screenshot(page, `lobby-${language}-1440x900`, publish);
    await page.getByRole("button", { name: text(language, "lobby.start") }).click();
    await expect(page).toHaveURL(/\/operate\//);
    const caseId = (await page.getByTestId("case-id").textContent()) ?? "";
    expect(caseId).not.toBe("");

    const stage = new StagePage(await context.newPage(), secret);
    await stage.page.setViewportSize({ width: 1920, height: 1080 });
    await stage.open(caseId);
    const marker = await stage.loadMarker();
    await expect(stage.retrieval()).toHaveText(text(language, "stage.waiting"));
    await expect(stage.page.getByText(text(language, "stage.boardEmpty"))).toBeVisible();

    // Act 1: the detective does not know, and the X-ray shows why.
    await operator.selectRole("detective");
    await operator.askPreset(QUESTIONS[language]);
    await operator.expectAnswer("detective", "unknown");
    await expect(operator.verdict()).toHaveAttribute("data-verdict", "nothing_found");
    await expect(operator.verdict()).toContainText(
      text(language, "xray.verdict.nothing", {
        scopes: [text(language, "space.memoryOf", { role: text(language, "role.detective") }), text(language, "space.bulletin_board")].join(
          text(language, "scopes.joiner"),
        ),
      }),
    );
    await expect(stage.retrieval()).toHaveAttribute("data-outcome", "nothing", { timeout: STAGE_LAG_MS });
    await expect(stage.retrieval()).toContainText(text(language, "stage.outcome.nothing"));
    await expect(operator.matrixCell("detective", "combination")).toHaveAttribute("data-cell", "unknown");
    await screenshot(page, `console-${language}-act1-1440x900`, publish);
    await screenshot(stage.page, `stage-${language}-act1-1920x1080`, publish);

    // Act 2: the informant knows, from its own memory, and cites its card.
    await operator.selectRole("informant");
    await operator.ask(QUESTIONS[language]);
    await operator.expectAnswer("informant", "known");
    await expect(operator.answer()).toContainText(secret);
    const secretCard = operator.privateCards().locator(".card", { hasText: secret });
    await expect(secretCard).toHaveAttribute("data-cited", "true");
    const secretCardId = (await secretCard.getAttribute("data-card-id")) ?? "";
    await expect(operator.answer().locator(".cite")).toHaveCount(1);
    await expect(operator.answer().locator(".cite")).toHaveAttribute("data-card-id", secretCardId);
    await expect(operator.verdict()).toHaveAttribute("data-verdict", "found");
    await expect(operator.matrixCell("informant", "combination")).toHaveAttribute("data-cell", "own_memory");
    await expect(stage.retrieval()).toHaveAttribute("data-outcome", "own_memory", { timeout: STAGE_LAG_MS });
    expect(await stage.secretSeen(), "the stage showed the secret before publication").toBe(false);
    await screenshot(stage.page, `stage-${language}-act2-1920x1080`, publish);

    // Act 3: publish the informant's card; a sourced copy lands on the board and on the stage.
    await secretCard.getByRole("button", { name: new RegExp(text(language, "cards.publish")) }).click();
    const boardCopy = operator.board().locator(".card", { hasText: secret });
    await expect(boardCopy).toBeVisible();
    await expect(boardCopy).toContainText(
      text(language, "board.source", { role: text(language, "role.informant") }),
    );
    await expect(stage.page.getByTestId("stage-board")).toContainText(secret, { timeout: STAGE_LAG_MS });
    await expect(secretCard).toContainText(text(language, "cards.onBoard"));

    // Act 4: the detective asks again and now knows, from the board copy.
    await operator.selectRole("detective");
    await operator.ask(QUESTIONS[language]);
    await operator.expectAnswer("detective", "known");
    await expect(operator.verdict()).toHaveAttribute("data-verdict", "found");
    await expect(operator.verdict()).toContainText(text(language, "xray.verdict.board"));
    const copyId = (await boardCopy.getAttribute("data-card-id")) ?? "";
    await expect(operator.answer().locator(".cite")).toHaveCount(1);
    await expect(operator.answer().locator(".cite")).toHaveAttribute("data-card-id", copyId);
    await expect(boardCopy).toHaveAttribute("data-cited", "true");
    await expect(operator.matrixCell("detective", "combination")).toHaveAttribute("data-cell", "board");
    await expect(stage.retrieval()).toHaveAttribute("data-outcome", "board", { timeout: STAGE_LAG_MS });
    await expect(stage.retrieval()).toContainText(text(language, "stage.outcome.board"));

    // The stage never reloaded and only ever used the stage endpoints.
    expect(await stage.loadMarker()).toBe(marker);
    const allowed = new Set(["/api/session", `/api/cases/${caseId}/stage`, `/api/cases/${caseId}/stage/events`]);
    expect(stage.apiCalls.filter((path) => !allowed.has(path))).toEqual([]);

    // Both languages publish the act-4 pair for the presenter guide; English publishes every step.
    await screenshot(page, `console-${language}-act4-1440x900`, true);
    await screenshot(stage.page, `stage-${language}-act4-1920x1080`, true);
    await page.setViewportSize({ width: 1920, height: 1080 });
    await screenshot(page, `console-${language}-act4-1920x1080`, publish);
    await stage.page.setViewportSize({ width: 1440, height: 900 });
    await screenshot(stage.page, `stage-${language}-act4-1440x900`, publish);
  });
}
