import { expect, test } from "./bureau";
import { expectNoViolations } from "./axe";
import { ConsolePage, screenshot, text, useUiLanguage } from "./pages";

const CLAIMS = {
  en: { van: "The grey van left the harbour at midnight.", lights: "The warehouse lights were off at ten o'clock." },
  zh: { van: "灰色货车在午夜离开了港口。", lights: "十点钟仓库的灯是灭的。" },
} as const;
const SOURCES = { en: "the night porter", zh: "夜班门卫" } as const;

for (const language of ["en", "zh"] as const) {
  test(`the fifth act (${language}): a corroborated claim reaches the board with no path home, and erasure withdraws it`, async ({
    context,
    page,
    request,
    caseFor,
  }) => {
    const caseId = await caseFor("night-ferry", language);
    const stagePage = await context.newPage();
    await stagePage.emulateMedia({ reducedMotion: "reduce" });
    await stagePage.goto(`/stage/${caseId}`);
    await expect(stagePage.getByTestId("stage-case")).toHaveAttribute("data-case-id", caseId);

    await useUiLanguage(page, language);
    await page.emulateMedia({ reducedMotion: "reduce" });
    const operator = new ConsolePage(page, language);
    await operator.open(caseId);
    const panel = page.getByTestId("findings-panel");
    const claim = panel.getByLabel(text(language, "findings.claim"));

    // Two roles only: leave-one-out leaves one, so there is nothing to promote.
    await claim.fill(CLAIMS[language].lights);
    await panel.getByRole("button", { name: text(language, "findings.evaluate"), exact: true }).click();
    const refused = panel.getByTestId("finding-claim");
    await expect(refused).toHaveAttribute("data-decision", "not_qualified");
    await expect(refused.getByTestId("promote-finding")).toHaveCount(0);

    // Three roles, three sources: every contributor counted, the bar past the minimum; promote.
    await claim.fill(CLAIMS[language].van);
    await panel.getByRole("button", { name: text(language, "findings.evaluate"), exact: true }).click();
    const van = panel.getByTestId("finding-claim");
    await expect(van).toHaveAttribute("data-decision", "qualifies");
    await expect(van.locator('[data-status="counted"]')).toHaveCount(3);
    await expect(van).toContainText(text(language, "findings.toldBy", { source: SOURCES[language] }));
    await expectNoViolations(page, "console with a findings evaluation");
    await panel.scrollIntoViewIfNeeded();
    await screenshot(page, `console-${language}-findings-1440x900`, true);
    await van.getByTestId("promote-finding").click();
    await expect(panel.getByTestId("findings-list").locator('[data-state="ready"]')).toContainText(CLAIMS[language].van);

    // The stage: what the bureau learned, and nothing of who.
    const learned = stagePage.getByTestId("stage-finding");
    await expect(learned).toHaveText(text(language, "stage.learned", { text: CLAIMS[language].van }));
    await expect(stagePage.locator("body")).toContainText(text(language, "stage.learnedNote"));
    await expect(stagePage.locator("body")).not.toContainText(SOURCES[language]);
    await expectNoViolations(stagePage, "stage with a finding");
    await stagePage.setViewportSize({ width: 1920, height: 1080 });
    await screenshot(stagePage, `stage-${language}-finding-1920x1080`, true);

    // Erase the informant's account of the van from the console: the finding is withdrawn everywhere.
    const state = (await (await request.get(`/api/cases/${caseId}`)).json()) as {
      spaces: { informant: { id: string; topic: string }[] };
    };
    const account = state.spaces.informant.find((card) => card.topic === "van_harbourmaster");
    expect(account).toBeDefined();
    await operator.selectRole("informant");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByTestId(`erase-${account?.id}`).click();
    await expect(page.getByTestId("notice")).toHaveText(text(language, "cards.erased"));
    await expect(stagePage.getByTestId("stage-finding-withdrawn")).toHaveText(text(language, "stage.withdrawn"));
    await expect(learned).toHaveCount(0);
    await expect(panel.getByTestId("findings-list").locator('[data-state="withdrawn"]')).toContainText(
      text(language, "findings.withdrawnText"),
    );
    await expectNoViolations(stagePage, "stage after a withdrawal");
    await stagePage.close();
  });
}
