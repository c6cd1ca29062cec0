import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { FixedLanguage } from "../i18n/I18n";
import { renderWithI18n } from "../test/render";
import { ErrorBoundary } from "./ErrorBoundary";

afterEach(cleanup);

function Broken(): never {
  throw new TypeError("cannot read properties of undefined");
}

describe("<ErrorBoundary>", () => {
  it("shows a readable notice in the chosen language instead of a blank screen", () => {
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined);
    renderWithI18n(
      <FixedLanguage language="zh">
        <ErrorBoundary>
          <Broken />
        </ErrorBoundary>
      </FixedLanguage>,
    );
    expect(screen.getByRole("alert").textContent).toContain("此页面遇到无法显示的错误");
    expect(screen.getByRole("button", { name: "重新加载" })).toBeTruthy();
    quiet.mockRestore();
  });

  it("renders its children when nothing fails", () => {
    renderWithI18n(
      <ErrorBoundary>
        <p>fine</p>
      </ErrorBoundary>,
    );
    expect(screen.getByText("fine")).toBeTruthy();
    expect(screen.queryByRole("alert")).toBeNull();
  });
});
