import { readFileSync } from "node:fs";
import type { APIRequestContext, Page } from "@playwright/test";
import { expectNoViolations } from "./axe";
import { expect, test } from "./bureau";
import { ConsolePage, SECRET_CARD, StagePage, screenshot, text } from "./pages";

/** Issue #13: the console's timeline of the case record. Every interrogation and cross-examination is listed
 * (newest first), follows the game live, survives a reload, and opens its X-ray again; the stage never asks. */

const COMBINATION = "What is the safe combination?";

async function post(request: APIRequestContext, path: string, data: unknown): Promise<void> {
  const response = await request.post(path, { data });
  expect(response.status(), path).toBeLessThan(300);
}

function timeline(page: Page) {
  return page.getByTestId("case-timeline");
}

function entry(page: Page, number: number) {
  return timeline(page).locator(`.timeline__entry[data-number="${number}"]`);
}

test("the case record: two interrogations on the timeline, live and after a reload; the first one's X-ray again; sealed stays sealed", async ({
  page,
  context,
  request,
  caseFor,
}) => {
  const caseId = await caseFor("safe-combination", "en");
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);
  const marker = `zq${Math.random().toString(36).replace(/[^a-z]/g, "").slice(0, 10)}`;
  const stage = new StagePage(await context.newPage(), marker);
  await stage.open(caseId);
  await expect(timeline(page)).toContainText(text("en", "record.empty"));

  // First interrogation, from this console: the detective does not know.
  await operator.selectRole("detective");
  await operator.ask(COMBINATION);
  await operator.expectAnswer("detective", "unknown");
  await expect(entry(page, 1)).toContainText(text("en", "record.interrogation", { role: text("en", "role.detective") }));
  await expect(entry(page, 1)).toContainText(text("en", "certainty.unknown"));

  // Second, from somewhere else (another console, the API): it reaches this timeline over the live stream.
  await post(request, `/api/cases/${caseId}/interrogations`, { role: "informant", question: COMBINATION });
  await expect(entry(page, 2)).toContainText(text("en", "record.interrogation", { role: text("en", "role.informant") }));
  await expect(entry(page, 2)).toContainText(text("en", "certainty.known"));
  await expect(timeline(page).locator(".timeline__entry")).toHaveCount(2);
  // Newest first.
  await expect(timeline(page).locator(".timeline__entry").first()).toHaveAttribute("data-number", "2");

  // A reload mid-game rebuilds the timeline from the server's record.
  await page.reload();
  await expect(timeline(page).locator(".timeline__entry")).toHaveCount(2);

  // The first entry's X-ray, again: the detective searched its own space and the board, found nothing.
  await entry(page, 1).click();
  const dialog = page.getByRole("dialog", { name: new RegExp(text("en", "record.number", { n: 1 })) });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(COMBINATION);
  await expect(dialog.getByTestId("record-answer")).toContainText(text("en", "certainty.unknown"));
  await expect(dialog.getByTestId("xray-verdict")).toHaveAttribute("data-verdict", "nothing_found");
  await expect(dialog.getByTestId("xray-lane-detective")).toHaveAttribute("data-searched", "true");
  await expect(dialog.getByTestId("xray-lane-informant")).toHaveAttribute("data-searched", "false");
  await expect(dialog).not.toContainText(SECRET_CARD.en);
  await screenshot(page, "console-en-record-entry-1440x900");
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();

  // The second: the informant found its own card. In Chinese too, with the interface language.
  await entry(page, 2).click();
  const second = page.getByRole("dialog", { name: new RegExp(text("en", "record.number", { n: 2 })) });
  await expect(second.getByTestId("xray-verdict")).toHaveAttribute("data-verdict", "found");
  await expect(second.getByTestId("xray-lane-informant").locator('[data-kind="hit"]')).toHaveCount(1);
  await second.getByRole("button", { name: text("en", "record.close") }).click();
  await expect(second).toBeHidden();
  await page.getByRole("group", { name: text("en", "ui.language") }).getByRole("button", { name: text("en", "lang.zh"), exact: true }).click();
  await expect(entry(page, 2)).toContainText(text("zh", "record.interrogation", { role: text("zh", "role.informant") }));
  await entry(page, 2).click();
  const secondZh = page.getByRole("dialog", { name: new RegExp(text("zh", "record.number", { n: 2 })) });
  await expect(secondZh.getByTestId("xray-verdict")).toContainText(text("zh", "xray.verdict.own", { role: text("zh", "role.informant") }));
  await page.keyboard.press("Escape");
  await page.getByRole("group", { name: text("zh", "ui.language") }).getByRole("button", { name: text("zh", "lang.en"), exact: true }).click();

  // A cross-examination that mixes two roles' private cards is sealed: marked so in the list, shown only here.
  for (const [role, room] of [
    ["informant", "cellar"],
    ["suspect", "attic"],
  ] as const) {
    await post(request, `/api/cases/${caseId}/whispers`, { role, text: `Marker ${marker} hides in the ${room}.` });
  }
  await post(request, `/api/cases/${caseId}/cross-examinations`, { roles: ["informant", "suspect"], question: `Where does marker ${marker} hide?` });
  await expect(entry(page, 3)).toHaveAttribute("data-sealed", "true");
  await expect(entry(page, 3)).toContainText(text("en", "record.sealed"));
  await expect(entry(page, 3)).not.toContainText("cellar");
  await entry(page, 3).click();
  const sealed = page.getByRole("dialog", { name: new RegExp(text("en", "record.number", { n: 3 })) });
  await expect(sealed.getByTestId("sealed-conclusion")).toContainText(text("en", "cross.sealed"));
  await expect(sealed.getByTestId("xray")).toHaveCount(2);
  await screenshot(page, "console-en-record-sealed-1440x900");
  await page.emulateMedia({ reducedMotion: "reduce" });
  await expectNoViolations(page, "a sealed record entry shown again");
  await page.keyboard.press("Escape");
  await expect(stage.page.getByTestId("stage-conclusion")).toHaveAttribute("data-sealed", "true");
  expect(await stage.secretSeen(), "the stage showed a sealed conclusion's content").toBe(false);

  // Erasing a card the conclusion used takes its text out of the record; the entry says so and keeps its X-rays.
  const spaces = ((await (await request.get(`/api/cases/${caseId}`)).json()) as { spaces: Record<string, { id: string; content: string }[]> }).spaces;
  const cellar = spaces.informant?.find((card) => card.content.includes("cellar"));
  expect(cellar).toBeDefined();
  expect((await request.delete(`/api/cases/${caseId}/cards/${cellar?.id}`)).status()).toBe(204);
  await expect(entry(page, 3)).toContainText(text("en", "record.textGone"));
  await expect(entry(page, 2)).toContainText(COMBINATION); // an entry that did not use the card keeps its text
  await entry(page, 3).click();
  const redacted = page.getByRole("dialog", { name: new RegExp(text("en", "record.number", { n: 3 })) });
  await expect(redacted).toContainText(text("en", "record.erasedIngredients"));
  await expect(redacted).not.toContainText(marker);
  await expect(redacted.getByTestId("xray")).toHaveCount(2);
  await page.keyboard.press("Escape");

  await screenshot(page, "console-en-record-timeline-1440x900");

  // The report a presenter can hand out, downloaded from the timeline: every entry in order, a sealed one named, never quoted.
  const [download] = await Promise.all([page.waitForEvent("download"), timeline(page).getByRole("link", { name: text("en", "record.downloadReport") }).click()]);
  expect(download.suggestedFilename()).toBe(`case-${caseId}-record.md`);
  const report = readFileSync((await download.path()) ?? "", "utf8");
  const headings = report.split("\n").filter((line) => line.startsWith("## "));
  expect(headings).toEqual(["## 1. Interrogation of the detective", "## 2. Interrogation of the informant", "## 3. Cross-examination of informant, suspect"]);
  expect(report).toContain("**Sealed**");
  expect(report).not.toContain(marker);

  // A reset forgets the record, on this console too.
  await operator.reset();
  await expect(timeline(page)).toContainText(text("en", "record.empty"));

  // Operator only: the stage never fetched the record, and has no timeline.
  await expect(stage.page.getByTestId("case-timeline")).toHaveCount(0);
  expect(stage.apiCalls.filter((path) => path.includes("/record"))).toEqual([]);
  const allowed = new Set(["/api/session", `/api/cases/${caseId}/stage`, `/api/cases/${caseId}/stage/events`]);
  expect(stage.apiCalls.filter((path) => !allowed.has(path))).toEqual([]);
});

test("the case record is paged: 60 entries load as the timeline scrolls, each once, and a new question arrives alone", async ({ page, request, caseFor }) => {
  const caseId = await caseFor("safe-combination", "en");
  const ASKED = 60; // more than one page (50)
  for (let n = 0; n < ASKED; n += 1) {
    await post(request, `/api/cases/${caseId}/interrogations`, { role: (["detective", "informant", "suspect"] as const)[n % 3], question: COMBINATION });
  }
  const recordReads: string[] = [];
  page.on("request", (sent) => {
    const url = new URL(sent.url());
    if (url.pathname === `/api/cases/${caseId}/record`) recordReads.push(url.search);
  });
  const operator = new ConsolePage(page, "en");
  await operator.open(caseId);

  // The first page: the 50 newest, numbered from the record's total, and a way on to the older ones.
  const rows = timeline(page).locator(".timeline__entry");
  await expect(rows).toHaveCount(50);
  await expect(rows.first()).toHaveAttribute("data-number", String(ASKED));
  await expect(rows.last()).toHaveAttribute("data-number", String(ASKED - 49));
  const more = timeline(page).getByTestId("timeline-more");
  await expect(more).toBeVisible();

  // Scrolling the list to its end loads the rest, once; then the way on is gone.
  await timeline(page).locator(".timeline__list").evaluate((list) => list.scrollTo({ top: list.scrollHeight }));
  await expect(rows).toHaveCount(ASKED);
  await expect(more).toHaveCount(0);
  const numbers = await rows.evaluateAll((buttons) => buttons.map((button) => Number(button.getAttribute("data-number"))));
  expect(numbers).toEqual(Array.from({ length: ASKED }, (_, index) => ASKED - index));
  const ids = await rows.evaluateAll((buttons) => buttons.map((button) => button.getAttribute("data-entry-id")));
  expect(new Set(ids).size).toBe(ASKED);
  expect(recordReads.filter((query) => query.includes("after="))).toHaveLength(1);

  // A new question from elsewhere: it arrives on top over the live stream, read alone (a page of a version or
  // two), never the whole record again; the older entries stay as they were.
  recordReads.length = 0;
  await post(request, `/api/cases/${caseId}/interrogations`, { role: "informant", question: COMBINATION });
  await expect(rows).toHaveCount(ASKED + 1);
  await expect(rows.first()).toHaveAttribute("data-number", String(ASKED + 1));
  await expect(rows.last()).toHaveAttribute("data-number", "1");
  expect(recordReads.length).toBeGreaterThan(0);
  for (const query of recordReads) {
    const params = new URLSearchParams(query);
    expect(params.get("after"), query).toBeNull();
    expect(Number(params.get("limit")), query).toBeLessThanOrEqual(3);
  }
});
