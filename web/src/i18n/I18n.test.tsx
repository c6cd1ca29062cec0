import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api } from "../api/client";
import { Lobby } from "../screens/Lobby";
import { I18nProvider, initialLanguage, useI18n } from "./I18n";

const STORAGE_KEY = "bureau.uiLanguage";

function browserSpeaks(...languages: string[]) {
  vi.spyOn(navigator, "languages", "get").mockReturnValue(languages);
  vi.spyOn(navigator, "language", "get").mockReturnValue(languages[0] ?? "");
}

function ShowLanguage() {
  const { language, t } = useI18n();
  return (
    <p data-testid="ui" data-language={language}>
      {t("lobby.heading")}
    </p>
  );
}

beforeEach(() => localStorage.clear());
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  localStorage.clear();
});

describe("initialLanguage", () => {
  it("keeps the operator's choice, else takes the first browser language the interface speaks, else English", () => {
    expect(initialLanguage(null, ["zh-CN", "zh", "en"])).toBe("zh");
    expect(initialLanguage(null, ["zh-TW"])).toBe("zh");
    expect(initialLanguage(null, ["ZH_hans"])).toBe("zh");
    expect(initialLanguage(null, ["fr-FR", "zh-CN", "en"])).toBe("zh"); // French is not offered: the next one
    expect(initialLanguage(null, ["en-GB", "zh-CN"])).toBe("en");
    expect(initialLanguage(null, ["fr-FR", "de"])).toBe("en");
    expect(initialLanguage(null, [])).toBe("en");
    expect(initialLanguage("en", ["zh-CN"])).toBe("en"); // the switch's memory wins
    expect(initialLanguage("zh", ["en-US"])).toBe("zh");
    expect(initialLanguage("fr", ["zh-CN"])).toBe("zh"); // a stored value that is no language is ignored
  });
});

describe("<I18nProvider>", () => {
  it("starts a Chinese browser in Chinese when nothing is stored, and stores nothing for it", () => {
    browserSpeaks("zh-CN", "zh", "en");
    render(
      <I18nProvider>
        <ShowLanguage />
      </I18nProvider>,
    );
    expect(screen.getByTestId("ui").dataset.language).toBe("zh");
    expect(screen.getByTestId("ui").textContent).toBe("开启案件");
    expect(document.documentElement.lang).toBe("zh-CN");
    expect(localStorage.getItem(STORAGE_KEY)).toBeNull();
  });

  it("keeps the language the switch remembered, whatever the browser says", () => {
    browserSpeaks("zh-CN", "zh");
    localStorage.setItem(STORAGE_KEY, "en");
    render(
      <I18nProvider>
        <ShowLanguage />
      </I18nProvider>,
    );
    expect(screen.getByTestId("ui").dataset.language).toBe("en");
    expect(document.documentElement.lang).toBe("en");
  });

  it("starts an English or other browser in English", () => {
    browserSpeaks("de-DE", "fr");
    render(
      <I18nProvider>
        <ShowLanguage />
      </I18nProvider>,
    );
    expect(screen.getByTestId("ui").dataset.language).toBe("en");
  });
});

describe("<Lobby> case language", () => {
  function renderLobby() {
    vi.spyOn(api, "scenarios").mockResolvedValue([
      { id: "safe-combination", title: "The Safe Combination", language: "en", description: "" },
      { id: "safe-combination", title: "保险箱密码", language: "zh", description: "" },
    ]);
    render(
      <I18nProvider>
        <MemoryRouter>
          <Lobby />
        </MemoryRouter>
      </I18nProvider>,
    );
  }
  const checked = (value: string) =>
    (document.querySelector(`input[name="case-language"][value="${value}"]`) as HTMLInputElement).checked;

  it("defaults to the browser's language and follows the interface switch until one is picked", async () => {
    browserSpeaks("zh-CN", "zh", "en");
    renderLobby();
    await waitFor(() => expect(screen.getByText("保险箱密码")).toBeTruthy());
    expect(checked("zh")).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "English" }));
    await waitFor(() => expect(checked("en")).toBe(true));
    expect(screen.getByText("The Safe Combination")).toBeTruthy();
    fireEvent.click(document.querySelector('input[name="case-language"][value="zh"]') as HTMLInputElement);
    expect(checked("zh")).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "中文" }));
    fireEvent.click(screen.getByRole("button", { name: "English" }));
    expect(checked("zh")).toBe(true); // picked here: the switch no longer moves it
  });
});
